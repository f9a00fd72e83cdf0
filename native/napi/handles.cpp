#include "napi/handles.h"

#include "napi/js_values.h"
#include "tet/error.h"

namespace tet::napi {

namespace {
// Random 128-bit tags: napi_check_object_type_tag tells our externals apart from any other value.
constexpr napi_type_tag kFileTag = {0x7465747266696c65ULL, 0x9b3c1f2a5d0e4b11ULL};
constexpr napi_type_tag kWriterTag = {0x7465747277726974ULL, 0x4f8a22c6e1d93b07ULL};
constexpr napi_type_tag kCancelTag = {0x7465747263616e63ULL, 0x1e6d5b93a07c4f28ULL};

template <typename T>
T* Unwrap(const Napi::Value& v, const napi_type_tag& tag, const char* what) {
  if (!v.IsExternal() || !v.As<Napi::External<T>>().CheckTypeTag(&tag))
    ThrowArg(v.Env(), std::string("expected a ") + what + " handle");
  return v.As<Napi::External<T>>().Data();
}
}  // namespace

Napi::External<FileSlot> WrapFile(Napi::Env env, std::shared_ptr<File> file) {
  auto* slot = new FileSlot{std::move(file)};
  auto ext = Napi::External<FileSlot>::New(env, slot, [](Napi::Env, FileSlot* s) { delete s; });
  ext.TypeTag(&kFileTag);
  return ext;
}

FileSlot& UnwrapFileSlot(const Napi::Value& v) { return *Unwrap<FileSlot>(v, kFileTag, "file"); }

std::shared_ptr<File> OpenFileOf(const Napi::Value& v) {
  FileSlot& slot = UnwrapFileSlot(v);
  if (!slot.file) fail("TET_IO_CLOSED", "the file handle is closed (closeFile was called)");
  return slot.file;
}

Napi::External<WriterRef> WrapWriter(Napi::Env env, std::unique_ptr<Writer> writer) {
  auto* ref = new WriterRef(std::make_shared<WriterState>());
  (*ref)->writer = std::move(writer);
  // Dropping the last reference to an uncommitted writer aborts it (removes its temp file).
  auto ext = Napi::External<WriterRef>::New(env, ref, [](Napi::Env, WriterRef* r) { delete r; });
  ext.TypeTag(&kWriterTag);
  return ext;
}

WriterRef UnwrapWriter(const Napi::Value& v) { return *Unwrap<WriterRef>(v, kWriterTag, "writer"); }

Napi::External<std::shared_ptr<QueryToken>> WrapCancel(Napi::Env env) {
  using Ref = std::shared_ptr<QueryToken>;
  auto* token = new Ref(std::make_shared<QueryToken>());
  auto ext = Napi::External<Ref>::New(env, token, [](Napi::Env, Ref* t) { delete t; });
  ext.TypeTag(&kCancelTag);
  return ext;
}

CancelFlag UnwrapCancel(const Napi::Value& v) {
  if (v.IsNull() || v.IsUndefined()) return nullptr;
  const std::shared_ptr<QueryToken>& t = *Unwrap<std::shared_ptr<QueryToken>>(v, kCancelTag, "cancel token");
  return CancelFlag(t, &t->cancelled);  // aliasing: owns the token, points at its flag
}

ProgressRef UnwrapProgress(const Napi::Value& v) {
  if (v.IsNull() || v.IsUndefined()) return nullptr;
  const std::shared_ptr<QueryToken>& t = *Unwrap<std::shared_ptr<QueryToken>>(v, kCancelTag, "cancel token");
  return ProgressRef(t, &t->progress);
}

}  // namespace tet::napi

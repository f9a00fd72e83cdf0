// Strategy::MmapSpill (export): the selection in its storage type, scattered into a shared
// mapping of a temp file beside the target, synced, renamed into place, directory synced.
#include <atomic>

#include "exec/materialize.h"

namespace tet {
namespace exec {

template <class S, class T> void spill(const ReadInput& in) {
  const std::string& path = in.plan.spill_path;
  const uint64_t bytes = in.sel.elements * sizeof(S);
  static std::atomic<uint64_t> serial{0};
  const std::string tmp = path + ".tmp-" + std::to_string(process_id()) + "-" + std::to_string(serial.fetch_add(1));
  ScratchMapping m;
  m.fd = create_exclusive(tmp);
  try {
    map_shared_file(m, tmp, bytes);
    scatter<S, S>(in, m.data(), in.sel.elements);
    const uint64_t k = preview_len(in.plan, in.sel);
    if (std::is_same<S, T>::value) {
      preview_from<T>(in, reinterpret_cast<const T*>(m.data()));
    } else {
      in.res.preview.resize(k * sizeof(T));
      std::vector<T> tmpv(k);
      load_elems<S, T>(m.data(), 1, k, tmpv.data());
      std::memcpy(in.res.preview.data(), tmpv.data(), k * sizeof(T));
      in.res.preview_length = k;
    }
    sync_mapping(m, tmp);
    rename_file(tmp, path);
  } catch (...) {
    remove_file(tmp);
    throw;
  }
  fsync_dir_of(path);
  in.res.stats.spill_bytes = bytes;
}

#define TET_SPILL_INSTANTIATE(S, T) template void spill<S, T>(const ReadInput&);
TET_EXEC_DTYPE_PAIRS(TET_SPILL_INSTANTIATE)
#undef TET_SPILL_INSTANTIATE

}  // namespace exec
}  // namespace tet

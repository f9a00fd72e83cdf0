{
  "targets": [
    {
      "target_name": "tetration_zstd",
      "type": "static_library",
      "sources": ["<!@(node scripts/native-sources.js zstd)"],
      "include_dirs": ["native/vendor/zstd/lib", "native/vendor/zstd/lib/common"],
      "defines": ["XXH_NAMESPACE=ZSTD_", "ZSTD_NO_TRACE", "ZSTDLIB_VISIBLE=", "ZSTDERRORLIB_VISIBLE="],
      "cflags": ["-O3", "-fvisibility=hidden", "-fPIC"],
      "direct_dependent_settings": { "include_dirs": ["native/vendor/zstd/lib"] }
    },
    {
      "target_name": "tetration",
      "dependencies": ["tetration_zstd"],
      "sources": ["<!@(node scripts/native-sources.js core)"],
      "include_dirs": ["<!(node -p \"require('node-addon-api').include_dir\")", "native/include", "native"],
      "defines": ["NAPI_VERSION=8", "NODE_ADDON_API_CPP_EXCEPTIONS", "NODE_ADDON_API_DISABLE_DEPRECATED"],
      "cflags!": ["-fno-exceptions", "-O2"],
      "cflags_cc!": ["-fno-exceptions", "-fno-rtti", "-std=gnu++17"],
      "cflags_cc": ["-std=c++17", "-O3", "-fexceptions", "-pthread", "-fvisibility=hidden"],
      "ldflags": ["-pthread"],
      "conditions": [["OS=='linux'", { "ldflags": ["-Wl,--version-script=<(module_root_dir)/native/napi/exports.map"] }]],
      "libraries": ["-ldl"],
      "xcode_settings": {
        "GCC_ENABLE_CPP_EXCEPTIONS": "YES",
        "CLANG_CXX_LANGUAGE_STANDARD": "c++17",
        "OTHER_CPLUSPLUSFLAGS": ["-O3"]
      },
      "msvs_settings": { "VCCLCompilerTool": { "ExceptionHandling": 1 } }
    },
    {
      "target_name": "tetration_cuda_stub",
      "type": "shared_library",
      "sources": ["cuda/host_stub.cpp"],
      "cflags!": ["-fno-exceptions", "-O2"],
      "cflags_cc!": ["-fno-exceptions", "-fno-rtti", "-std=gnu++17"],
      "cflags_cc": ["-std=c++17", "-O2", "-fexceptions", "-fvisibility=hidden"],
      "xcode_settings": { "GCC_ENABLE_CPP_EXCEPTIONS": "YES", "CLANG_CXX_LANGUAGE_STANDARD": "c++17" }
    }
  ]
}

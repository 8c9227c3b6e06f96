{
  # The kubelet-ts native addon: one target, every hot path in native/src/*.cc (not native/fuzz/:
  # the fuzz targets and the PLEG reference decoders are built by scripts/fuzz-*.sh).
  # Built by scripts/build-native.mjs (node-gyp). native/CMakeLists.txt builds the same sources
  # with sanitizers for scripts/test-native-asan.sh.
  "targets": [
    {
      "target_name": "kubelet_ts_native",
      "sources": [
        "<!@(node -p \"require('fs').readdirSync('native/src').filter(f => f.endsWith('.cc')).sort().map(f => 'native/src/' + f).join(' ')\")"
      ],
      "include_dirs": [ "<!(node -p \"require('node-addon-api').include_dir\")" ],
      "defines": [ "NAPI_VERSION=8", "NAPI_DISABLE_CPP_EXCEPTIONS", "NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS" ],
      "cflags_cc!": [ "-std=gnu++17", "-fexceptions" ],
      "cflags_cc": [ "-std=c++17", "-fno-exceptions", "-Wall", "-Wextra" ],
      "ldflags": [ "-pthread" ],
      "configurations": {
        "Release": { "cflags!": [ "-O3" ], "cflags_cc!": [ "-O3" ], "cflags": [ "-O2" ], "cflags_cc": [ "-O2" ] }
      }
    }
  ]
}

// swift-tools-version: 6.2
//
// squeeze: compress a folder's files in parallel into standard gzip files.
//
// The modules are layers: each imports only the ones below it, and reaches them through
// `package` declarations, so the compiler keeps a lower layer from calling a higher one.
//
//   CZlib, CLibdeflate, CIsal, CSystem   C libraries (system library targets)
//   SqueezeSystem    file descriptors, raw-byte paths, file status, errno, temporaries made
//                    through their folder's descriptor, signals, threads, the clock: the only
//                    Swift module that makes system calls or imports CSystem; the others use
//                    its typed wrappers (SqueezeEngines imports Glibc for `log2` alone)
//   SqueezeEngines   deflate and inflate behind two protocols, with the zlib, libdeflate and
//                    ISA-L adapters and the fast engine's level map: the only module that
//                    imports the compression libraries
//   SqueezeGzip      the gzip format (RFC 1952): header, trailer, compression levels, the
//                    streaming decoder (the decoder's fuzz target builds against this module,
//                    SqueezeEngines and SqueezeSystem alone)
//   SqueezeTaskLog   task states, their counters and hooks, the task-state log's writer, its
//                    sampler and the main-actor heartbeat, the log's reader, and JSONWriter
//                    (the one JSON writer: the log, the trace, the page's data, -l --json)
//   SqueezeTimeline  drawing a task-state log: SVG, an HTML page, a Chrome trace (the
//                    task-log fuzz target builds against this module and SqueezeTaskLog)
//   SqueezeCore      the pipeline: discover, plan, execute (the scheduler, compression,
//                    restores, outputs, mirrors), report, from one resolved configuration
//   SqueezeCLI       the command line: the option table, the parser, help, man page and
//                    completions, resolving options into a configuration, and the commands
//                    (a run, a stream, a list, `squeeze timeline`)
//   squeeze          the thin executable over SqueezeCLI
//   TestSupport      helpers shared by the test targets (temporary folders, running processes)
//
// Each module has a test target of its own; SqueezeCLITests runs the built executable.
//
// Language: Swift 6 mode (complete strict concurrency). Upcoming feature on:
//   NonisolatedNonsendingByDefault (SE-0461): a plain `nonisolated async` function runs on
//   its caller's actor, as in Xcode's "Approachable Concurrency". CPU-heavy async entry points
//   are therefore marked `@concurrent`, so they leave the caller's actor either way.
import PackageDescription

// Release builds use the static Swift runtime and Foundation (-static-stdlib, as
// `swift build --static-swift-stdlib` does, so every script's plain `swift build -c release`
// gets it): a process starts without loading and binding some twenty shared libraries, ICU
// among them (what that cost: the Performance article). Debug builds, which the tests link
// against, keep the shared runtime.
let staticRuntime = ["-static-stdlib"]

let swiftSettings: [SwiftSetting] = [
  .enableUpcomingFeature("NonisolatedNonsendingByDefault"),
  .unsafeFlags(staticRuntime, .when(platforms: [.linux], configuration: .release)),
]

let package = Package(
  name: "squeeze",
  products: [
    .executable(name: "squeeze", targets: ["squeeze"]),
    .library(name: "SqueezeCore", targets: ["SqueezeCore"]),
    .library(name: "SqueezeCLI", targets: ["SqueezeCLI"]),
  ],
  targets: [
    .systemLibrary(
      name: "CZlib",
      path: "Sources/CZlib",
      pkgConfig: "zlib",
      providers: [.apt(["zlib1g-dev"])]
    ),
    // libdeflate is linked statically (its module map links ":libdeflate.a"): no pkgConfig,
    // which would add -ldeflate, the shared library (measurably slower: see the Performance
    // article).
    .systemLibrary(
      name: "CLibdeflate",
      path: "Sources/CLibdeflate",
      providers: [.apt(["libdeflate-dev"])]
    ),
    .systemLibrary(
      name: "CIsal",
      path: "Sources/CIsal",
      pkgConfig: "libisal",
      providers: [.apt(["libisal-dev"])]
    ),
    .systemLibrary(name: "CSystem", path: "Sources/CSystem"),
    .target(
      name: "SqueezeEngines",
      dependencies: ["CZlib", "CLibdeflate", "CIsal"],
      swiftSettings: swiftSettings
    ),
    .target(
      name: "SqueezeSystem",
      dependencies: ["CSystem"],
      swiftSettings: swiftSettings
    ),
    .target(
      name: "SqueezeGzip",
      dependencies: ["SqueezeEngines", "SqueezeSystem"],
      swiftSettings: swiftSettings
    ),
    .target(
      name: "SqueezeTaskLog",
      dependencies: ["SqueezeSystem"],
      swiftSettings: swiftSettings
    ),
    .target(
      name: "SqueezeTimeline",
      dependencies: ["SqueezeTaskLog", "SqueezeSystem"],
      swiftSettings: swiftSettings
    ),
    .target(
      name: "SqueezeCore",
      dependencies: [
        "SqueezeSystem", "SqueezeEngines", "SqueezeGzip", "SqueezeTaskLog", "CSystem",
      ],
      swiftSettings: swiftSettings
    ),
    .target(
      name: "SqueezeCLI",
      dependencies: [
        "SqueezeCore", "SqueezeTimeline", "SqueezeTaskLog", "SqueezeGzip", "SqueezeEngines",
        "SqueezeSystem",
      ],
      swiftSettings: swiftSettings
    ),
    .executableTarget(
      name: "squeeze",
      dependencies: ["SqueezeCLI"],
      swiftSettings: swiftSettings,
      linkerSettings: [
        .unsafeFlags(staticRuntime, .when(platforms: [.linux], configuration: .release))
      ]
    ),
    .target(
      name: "TestSupport",
      path: "Tests/TestSupport",
      swiftSettings: swiftSettings
    ),
    .testTarget(
      name: "SqueezeEnginesTests",
      dependencies: ["SqueezeEngines", "CZlib", "TestSupport"],
      swiftSettings: swiftSettings
    ),
    .testTarget(
      name: "SqueezeSystemTests",
      dependencies: ["SqueezeSystem", "TestSupport"],
      swiftSettings: swiftSettings
    ),
    .testTarget(
      name: "SqueezeGzipTests",
      dependencies: ["SqueezeGzip", "SqueezeEngines", "SqueezeSystem", "CZlib", "TestSupport"],
      swiftSettings: swiftSettings
    ),
    .testTarget(
      name: "SqueezeTaskLogTests",
      dependencies: ["SqueezeTaskLog", "SqueezeSystem", "TestSupport"],
      swiftSettings: swiftSettings
    ),
    .testTarget(
      name: "SqueezeTimelineTests",
      dependencies: ["SqueezeTimeline", "SqueezeTaskLog", "SqueezeSystem", "TestSupport"],
      swiftSettings: swiftSettings
    ),
    .testTarget(
      name: "SqueezeCoreTests",
      dependencies: [
        "SqueezeCore", "SqueezeSystem", "SqueezeEngines", "SqueezeGzip", "SqueezeTaskLog", "CZlib",
        "TestSupport",
      ],
      swiftSettings: swiftSettings
    ),
    .testTarget(
      name: "SqueezeCLITests",
      dependencies: [
        "squeeze", "SqueezeCLI", "SqueezeCore", "SqueezeSystem", "SqueezeTaskLog",
        "SqueezeTimeline", "SqueezeGzip", "SqueezeEngines", "TestSupport",
      ],
      swiftSettings: swiftSettings
    ),
  ],
  swiftLanguageModes: [.v6]
)

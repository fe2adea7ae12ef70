// swift-tools-version: 6.2
//
// squeeze: compress a folder's files in parallel into standard gzip files.
//
// Targets (see README.md, "Layout"):
//   CZlib        system library: zlib through pkg-config (Debian's zlib1g-dev)
//   CLibdeflate  system library: libdeflate, linked statically (Debian's libdeflate-dev)
//   CIsal        system library: ISA-L's deflate and inflate via pkg-config (Debian's libisal-dev)
//   SqueezeEngines  the engine seam: deflate and inflate behind two protocols, with the
//                zlib, libdeflate and ISA-L adapters; the only module that imports them
//   CSystem      system library: Linux calls glibc's Swift module does not export
//                (syncfs, openat2, renameat2, sched_getaffinity, ioctl(TIOCGWINSZ)), as
//                static inline shims
//   SqueezeCore  all logic: gzip format, discovery, scheduling, output, progress, diagnostics, CLI
//   squeeze      the thin executable over SqueezeCore
//   TestSupport  helpers shared by the two test targets (temporary folders, running processes)
//
// Language: Swift 6 mode (complete strict concurrency). Upcoming feature on:
//   NonisolatedNonsendingByDefault (SE-0461): a plain `nonisolated async` function runs on
//   its caller's actor, as in Xcode's "Approachable Concurrency". CPU-heavy async entry points
//   are therefore marked `@concurrent`, so they leave the caller's actor either way.
import PackageDescription

// Release builds use the static Swift runtime and Foundation (-static-stdlib, as
// `swift build --static-swift-stdlib` does, so every script's plain `swift build -c release`
// gets it): a process starts in about 10 ms instead of 20 ms spent loading and binding some
// twenty shared libraries, ICU among them, which was 7 % of restoring a 130 MB file (issue
// 10). Debug builds, which the tests link against, keep the shared runtime.
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
  ],
  targets: [
    .systemLibrary(
      name: "CZlib",
      path: "Sources/CZlib",
      pkgConfig: "zlib",
      providers: [.apt(["zlib1g-dev"])]
    ),
    // libdeflate is linked statically (its module map links ":libdeflate.a"): no pkgConfig,
    // which would add -ldeflate, the shared library (measured 25 % slower, issue 10).
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
      name: "SqueezeCore",
      dependencies: ["SqueezeEngines", "CSystem"],
      swiftSettings: swiftSettings
    ),
    .executableTarget(
      name: "squeeze",
      dependencies: ["SqueezeCore"],
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
      name: "SqueezeCoreTests",
      dependencies: ["SqueezeCore", "SqueezeEngines", "CZlib", "TestSupport"],
      swiftSettings: swiftSettings
    ),
    .testTarget(
      name: "SqueezeCLITests",
      dependencies: ["squeeze", "SqueezeCore", "TestSupport"],
      swiftSettings: swiftSettings
    ),
  ],
  swiftLanguageModes: [.v6]
)

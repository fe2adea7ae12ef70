import Foundation
import Glibc
import TestSupport
import Testing

/// squeeze's outputs at levels 6 and 9 are pinned byte for byte, for both engines and every
/// way of writing them (beside the source, a mirror, standard output, `--rsyncable`); so are
/// the fast engine's levels 1 and 2, where ISA-L's deflate compresses, and 3.
///
/// A restructuring must not change one byte a user gets: this suite fails on any change
/// to the gzip member, the chunking or the engines' settings at these levels. When an
/// output is meant to change, the new hashes go here in the same commit, with the reason
/// in its message.
@Suite struct PinnedOutputTests {
  /// One pinned configuration: an engine and a compression level.
  struct Setting: Sendable, CustomTestStringConvertible {
    var engine: String
    var level: Int
    var testDescription: String { "--engine \(engine) -\(level)" }
  }

  static let settings = [
    Setting(engine: "fast", level: 6), Setting(engine: "fast", level: 9),
    Setting(engine: "zlib", level: 6), Setting(engine: "zlib", level: 9),
    Setting(engine: "fast", level: 1), Setting(engine: "fast", level: 2),
    Setting(engine: "fast", level: 3),
  ]

  /// The corpus: sizes around the chunk sizes (128 KiB for zlib, 1 MiB for fast), empty and
  /// one-byte files, incompressible data (stored blocks), all generated from fixed seeds.
  static let files: [(name: String, bytes: [UInt8])] = [
    ("empty", []),
    ("one", [0x41]),
    ("small.txt", TestData.text(5_000)),
    ("medium.txt", TestData.text(300 << 10, seed: 7)),
    ("large.txt", TestData.text((3 << 20) + 12_345, seed: 11)),
    ("random.bin", TestData.random((1 << 20) + 4_321)),
  ]

  /// The modes, each with the arguments that write `name`'s output and where it lands.
  enum Mode: String, CaseIterable {
    case beside, mirror, stdout, rsyncable
  }

  @Test(arguments: settings)
  func outputsAreTheBytesTheyWere(setting: Setting) throws {
    let folder = TemporaryFolder("pinned")
    for file in Self.files {
      let path = try folder.write("in/\(file.name)", file.bytes)
      var times = [
        timespec(tv_sec: 1_600_000_000, tv_nsec: 0), timespec(tv_sec: 1_600_000_000, tv_nsec: 0),
      ]
      #expect(utimensat(AT_FDCWD, path, &times, 0) == 0)
    }
    let common = ["-q", "--engine", setting.engine, "-\(setting.level)"]
    for mode in Mode.allCases {
      var outputs: [String: [UInt8]] = [:]
      switch mode {
      case .beside, .rsyncable:
        let copy = "\(mode.rawValue)"
        for file in Self.files {
          let path = try folder.write("\(copy)/\(file.name)", file.bytes)
          var times = [
            timespec(tv_sec: 1_600_000_000, tv_nsec: 0),
            timespec(tv_sec: 1_600_000_000, tv_nsec: 0),
          ]
          #expect(utimensat(AT_FDCWD, path, &times, 0) == 0)
        }
        let extra = mode == .rsyncable ? ["--rsyncable"] : []
        let result = try SqueezeBinary.run(common + extra + [folder.url(copy)])
        try #require(result.status == 0, "\(mode): \(result.stderrText)")
        for file in Self.files { outputs[file.name] = try folder.read("\(copy)/\(file.name).gz") }
      case .mirror:
        let result = try SqueezeBinary.run(
          common + ["-o", folder.url("mirror"), folder.url("in") + "/"])
        try #require(result.status == 0, "\(mode): \(result.stderrText)")
        for file in Self.files { outputs[file.name] = try folder.read("mirror/\(file.name).gz") }
      case .stdout:
        for file in Self.files {
          let result = try SqueezeBinary.run(common + ["-c", folder.url("in/\(file.name)")])
          try #require(result.status == 0, "\(mode): \(result.stderrText)")
          outputs[file.name] = result.stdout
        }
      }
      for file in Self.files {
        let key = "\(setting.engine) -\(setting.level) \(mode.rawValue) \(file.name)"
        let digest = try Self.sha256(outputs[file.name] ?? [])
        #expect(digest == Self.expectedDigest(key), "\(key)")
      }
    }
  }

  /// The digest `key`'s output must have on this machine: ``pinned``'s, or, for squeeze `-2`
  /// on a CPU where ISA-L does not run its AVX-512 code (there `-2` is libdeflate -1),
  /// ``pinnedWithoutAVX512``'s.
  static func expectedDigest(_ key: String) -> String? {
    if !cpuHasAVX512, let digest = pinnedWithoutAVX512[key] { return digest }
    return pinned[key]
  }

  /// Whether ISA-L takes its AVX-512 code here: the CPU reports AVX512F, CD, BW, DQ and VL,
  /// the set ISA-L 2.30's dispatcher asks for (`/proc/cpuinfo` lists what the kernel lets
  /// programs use).
  static let cpuHasAVX512: Bool = {
    guard let text = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8),
      let line = text.split(separator: "\n").first(where: { $0.hasPrefix("flags") })
    else { return false }
    let flags = Set(line.split(separator: " ").map(String.init))
    return ["avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl"].allSatisfy(flags.contains)
  }()

  /// The `-2` outputs on a CPU where ISA-L does not run its AVX-512 code (an AMD EPYC of
  /// family 23, model 49, with AVX2): there ISA-L's level 3 runs generic code, slower than
  /// libdeflate's level 1, so the level map gives `-2` to libdeflate -1 (the bytes `-3`
  /// writes). With AVX-512, `-2` is ISA-L's level 3 from 2 KiB (``pinned``). Levels 1, 6
  /// and 9 are the same bytes on both.
  static let pinnedWithoutAVX512: [String: String] = [
    "fast -2 beside small.txt": "8fd71c35c54948559fabbd5588cb7b8f851f5c81f2738eff1008823fa78d7d28",
    "fast -2 beside medium.txt": "7b8e813eb5055b551601959f6029c4a2d96cb93e334b257bda9c0cd10099082d",
    "fast -2 beside large.txt": "2a404be654dc4926cde898488566997d55482c76847119e6c96e6cc81991061f",
    "fast -2 mirror small.txt": "8fd71c35c54948559fabbd5588cb7b8f851f5c81f2738eff1008823fa78d7d28",
    "fast -2 mirror medium.txt": "7b8e813eb5055b551601959f6029c4a2d96cb93e334b257bda9c0cd10099082d",
    "fast -2 mirror large.txt": "2a404be654dc4926cde898488566997d55482c76847119e6c96e6cc81991061f",
    "fast -2 stdout small.txt": "8fd71c35c54948559fabbd5588cb7b8f851f5c81f2738eff1008823fa78d7d28",
    "fast -2 stdout medium.txt": "7b8e813eb5055b551601959f6029c4a2d96cb93e334b257bda9c0cd10099082d",
    "fast -2 stdout large.txt": "2a404be654dc4926cde898488566997d55482c76847119e6c96e6cc81991061f",
    "fast -2 rsyncable small.txt":
      "8fd71c35c54948559fabbd5588cb7b8f851f5c81f2738eff1008823fa78d7d28",
    "fast -2 rsyncable medium.txt":
      "7b8e813eb5055b551601959f6029c4a2d96cb93e334b257bda9c0cd10099082d",
    "fast -2 rsyncable large.txt":
      "e17e33fe236a5167ea99344c9109f58c7a48321a00f06d445e19b5c15c29eb88",
  ]

  /// The SHA-256 of `bytes` in hex, from the system's `sha256sum`.
  static func sha256(_ bytes: [UInt8]) throws -> String {
    let result = try Shell.run("/usr/bin/sha256sum", ["-b"], input: bytes)
    return String(result.stdoutText.prefix(64))
  }

  /// The outputs' SHA-256 digests, as squeeze wrote them before the modules were split
  /// (levels 1 and 2: when ISA-L's deflate took them over, with ISA-L 2.30; level 1's
  /// large.txt again when its chunks' first call to ISA-L became one of their own, which made
  /// them the same bytes in every run; level 3 when its long chunks were first compressed in
  /// halves).
  static let pinned: [String: String] = [
    "fast -3 beside empty": "5546e4569166013e042d1fd2b79d62b7b92a256fed6cf7287ac459d7798c9862",
    "fast -3 beside large.txt": "2a404be654dc4926cde898488566997d55482c76847119e6c96e6cc81991061f",
    "fast -3 beside medium.txt": "7b8e813eb5055b551601959f6029c4a2d96cb93e334b257bda9c0cd10099082d",
    "fast -3 beside one": "757c1d26d5e3075a1af43b09a4fbbc38ed97fafb000b0d91417325f540827dd1",
    "fast -3 beside random.bin": "00f87d01ba750789357f6e32902ca1bd48bbe68ff214e881a7cadaa9b58b7fcf",
    "fast -3 beside small.txt": "8fd71c35c54948559fabbd5588cb7b8f851f5c81f2738eff1008823fa78d7d28",
    "fast -3 mirror empty": "5546e4569166013e042d1fd2b79d62b7b92a256fed6cf7287ac459d7798c9862",
    "fast -3 mirror large.txt": "2a404be654dc4926cde898488566997d55482c76847119e6c96e6cc81991061f",
    "fast -3 mirror medium.txt": "7b8e813eb5055b551601959f6029c4a2d96cb93e334b257bda9c0cd10099082d",
    "fast -3 mirror one": "757c1d26d5e3075a1af43b09a4fbbc38ed97fafb000b0d91417325f540827dd1",
    "fast -3 mirror random.bin": "00f87d01ba750789357f6e32902ca1bd48bbe68ff214e881a7cadaa9b58b7fcf",
    "fast -3 mirror small.txt": "8fd71c35c54948559fabbd5588cb7b8f851f5c81f2738eff1008823fa78d7d28",
    "fast -3 rsyncable empty": "5546e4569166013e042d1fd2b79d62b7b92a256fed6cf7287ac459d7798c9862",
    "fast -3 rsyncable large.txt":
      "e17e33fe236a5167ea99344c9109f58c7a48321a00f06d445e19b5c15c29eb88",
    "fast -3 rsyncable medium.txt":
      "7b8e813eb5055b551601959f6029c4a2d96cb93e334b257bda9c0cd10099082d",
    "fast -3 rsyncable one": "757c1d26d5e3075a1af43b09a4fbbc38ed97fafb000b0d91417325f540827dd1",
    "fast -3 rsyncable random.bin":
      "5f805dda23f64fd0e16ea2cf35963dd8f0fdd7225cf2f65cb9a89920bd4b432a",
    "fast -3 rsyncable small.txt":
      "8fd71c35c54948559fabbd5588cb7b8f851f5c81f2738eff1008823fa78d7d28",
    "fast -3 stdout empty": "5546e4569166013e042d1fd2b79d62b7b92a256fed6cf7287ac459d7798c9862",
    "fast -3 stdout large.txt": "2a404be654dc4926cde898488566997d55482c76847119e6c96e6cc81991061f",
    "fast -3 stdout medium.txt": "7b8e813eb5055b551601959f6029c4a2d96cb93e334b257bda9c0cd10099082d",
    "fast -3 stdout one": "757c1d26d5e3075a1af43b09a4fbbc38ed97fafb000b0d91417325f540827dd1",
    "fast -3 stdout random.bin": "00f87d01ba750789357f6e32902ca1bd48bbe68ff214e881a7cadaa9b58b7fcf",
    "fast -3 stdout small.txt": "8fd71c35c54948559fabbd5588cb7b8f851f5c81f2738eff1008823fa78d7d28",
    "fast -1 beside empty": "6f4026190cd7657540a5eac356fe0bcae85acb07ae7e622d8643d1a7d6ccb5b1",
    "fast -1 beside large.txt": "bb1175838f9987f9773f79055c009af597f614c2d6694f23f30da2644ef11d1a",
    "fast -1 beside medium.txt": "aebb76cac8a2e53973b8ca6de9e773915ab5955e7da3ebf3462aa5e179ffab24",
    "fast -1 beside one": "5d92d05f17417cb2b1734a07c41bee264b94ae95e632d46c324d12553efbc342",
    "fast -1 beside random.bin": "5ab6a9df021bc9e3c14aa304d2302cb27091c8e40337011acd0021e941eeb221",
    "fast -1 beside small.txt": "a575d305c4d085a259cb3cb2be5ad5d8646597dd01ebbe20c485523f08be2fdc",
    "fast -1 mirror empty": "6f4026190cd7657540a5eac356fe0bcae85acb07ae7e622d8643d1a7d6ccb5b1",
    "fast -1 mirror large.txt": "bb1175838f9987f9773f79055c009af597f614c2d6694f23f30da2644ef11d1a",
    "fast -1 mirror medium.txt": "aebb76cac8a2e53973b8ca6de9e773915ab5955e7da3ebf3462aa5e179ffab24",
    "fast -1 mirror one": "5d92d05f17417cb2b1734a07c41bee264b94ae95e632d46c324d12553efbc342",
    "fast -1 mirror random.bin": "5ab6a9df021bc9e3c14aa304d2302cb27091c8e40337011acd0021e941eeb221",
    "fast -1 mirror small.txt": "a575d305c4d085a259cb3cb2be5ad5d8646597dd01ebbe20c485523f08be2fdc",
    "fast -1 rsyncable empty": "6f4026190cd7657540a5eac356fe0bcae85acb07ae7e622d8643d1a7d6ccb5b1",
    "fast -1 rsyncable large.txt":
      "e2b7eedce8cc5e5ca8bf149cba770cc0150dab44c57a71b006ecec33259021de",
    "fast -1 rsyncable medium.txt":
      "aebb76cac8a2e53973b8ca6de9e773915ab5955e7da3ebf3462aa5e179ffab24",
    "fast -1 rsyncable one": "5d92d05f17417cb2b1734a07c41bee264b94ae95e632d46c324d12553efbc342",
    "fast -1 rsyncable random.bin":
      "d9901f56cf979fd7d8388db7d374ce44cb8626f94719dc92411250a6ab55a703",
    "fast -1 rsyncable small.txt":
      "a575d305c4d085a259cb3cb2be5ad5d8646597dd01ebbe20c485523f08be2fdc",
    "fast -1 stdout empty": "6f4026190cd7657540a5eac356fe0bcae85acb07ae7e622d8643d1a7d6ccb5b1",
    "fast -1 stdout large.txt": "bb1175838f9987f9773f79055c009af597f614c2d6694f23f30da2644ef11d1a",
    "fast -1 stdout medium.txt": "aebb76cac8a2e53973b8ca6de9e773915ab5955e7da3ebf3462aa5e179ffab24",
    "fast -1 stdout one": "5d92d05f17417cb2b1734a07c41bee264b94ae95e632d46c324d12553efbc342",
    "fast -1 stdout random.bin": "5ab6a9df021bc9e3c14aa304d2302cb27091c8e40337011acd0021e941eeb221",
    "fast -1 stdout small.txt": "a575d305c4d085a259cb3cb2be5ad5d8646597dd01ebbe20c485523f08be2fdc",
    "fast -2 beside empty": "5546e4569166013e042d1fd2b79d62b7b92a256fed6cf7287ac459d7798c9862",
    "fast -2 beside large.txt": "15bc2bcb3d81690cb9f968cdf1cd6caf3faa3b21e5a078d6b3e397dcdaa1bd8d",
    "fast -2 beside medium.txt": "de5cc6a9313ead8f1bd81b617864295386e0181394ce0ef6db0b06e6df6a1e98",
    "fast -2 beside one": "757c1d26d5e3075a1af43b09a4fbbc38ed97fafb000b0d91417325f540827dd1",
    "fast -2 beside random.bin": "00f87d01ba750789357f6e32902ca1bd48bbe68ff214e881a7cadaa9b58b7fcf",
    "fast -2 beside small.txt": "8029e6070996c81ca00075b2bb8237bb99ccbdfe39234e44e2087f5d52b9c4db",
    "fast -2 mirror empty": "5546e4569166013e042d1fd2b79d62b7b92a256fed6cf7287ac459d7798c9862",
    "fast -2 mirror large.txt": "15bc2bcb3d81690cb9f968cdf1cd6caf3faa3b21e5a078d6b3e397dcdaa1bd8d",
    "fast -2 mirror medium.txt": "de5cc6a9313ead8f1bd81b617864295386e0181394ce0ef6db0b06e6df6a1e98",
    "fast -2 mirror one": "757c1d26d5e3075a1af43b09a4fbbc38ed97fafb000b0d91417325f540827dd1",
    "fast -2 mirror random.bin": "00f87d01ba750789357f6e32902ca1bd48bbe68ff214e881a7cadaa9b58b7fcf",
    "fast -2 mirror small.txt": "8029e6070996c81ca00075b2bb8237bb99ccbdfe39234e44e2087f5d52b9c4db",
    "fast -2 rsyncable empty": "5546e4569166013e042d1fd2b79d62b7b92a256fed6cf7287ac459d7798c9862",
    "fast -2 rsyncable large.txt":
      "efaf3d1cf9f11a54cdbee11f549d57f5c9bb14921c0bc3bd390ef55276197475",
    "fast -2 rsyncable medium.txt":
      "de5cc6a9313ead8f1bd81b617864295386e0181394ce0ef6db0b06e6df6a1e98",
    "fast -2 rsyncable one": "757c1d26d5e3075a1af43b09a4fbbc38ed97fafb000b0d91417325f540827dd1",
    "fast -2 rsyncable random.bin":
      "5f805dda23f64fd0e16ea2cf35963dd8f0fdd7225cf2f65cb9a89920bd4b432a",
    "fast -2 rsyncable small.txt":
      "8029e6070996c81ca00075b2bb8237bb99ccbdfe39234e44e2087f5d52b9c4db",
    "fast -2 stdout empty": "5546e4569166013e042d1fd2b79d62b7b92a256fed6cf7287ac459d7798c9862",
    "fast -2 stdout large.txt": "15bc2bcb3d81690cb9f968cdf1cd6caf3faa3b21e5a078d6b3e397dcdaa1bd8d",
    "fast -2 stdout medium.txt": "de5cc6a9313ead8f1bd81b617864295386e0181394ce0ef6db0b06e6df6a1e98",
    "fast -2 stdout one": "757c1d26d5e3075a1af43b09a4fbbc38ed97fafb000b0d91417325f540827dd1",
    "fast -2 stdout random.bin": "00f87d01ba750789357f6e32902ca1bd48bbe68ff214e881a7cadaa9b58b7fcf",
    "fast -2 stdout small.txt": "8029e6070996c81ca00075b2bb8237bb99ccbdfe39234e44e2087f5d52b9c4db",
    "fast -6 beside empty": "5546e4569166013e042d1fd2b79d62b7b92a256fed6cf7287ac459d7798c9862",
    "fast -6 beside large.txt": "53af17a2138cee11752766325ddbee7ae5570936d184ef7fcbd9e93d590f627e",
    "fast -6 beside medium.txt": "b411e39c47790d760616a2d03b811f3f80c1068614e67858f5152580fe67cd90",
    "fast -6 beside one": "757c1d26d5e3075a1af43b09a4fbbc38ed97fafb000b0d91417325f540827dd1",
    "fast -6 beside random.bin": "00f87d01ba750789357f6e32902ca1bd48bbe68ff214e881a7cadaa9b58b7fcf",
    "fast -6 beside small.txt": "90652496f4f34efa0c7534f9f7fe5876ff79610fa040b3213d7ab924290e117d",
    "fast -6 mirror empty": "5546e4569166013e042d1fd2b79d62b7b92a256fed6cf7287ac459d7798c9862",
    "fast -6 mirror large.txt": "53af17a2138cee11752766325ddbee7ae5570936d184ef7fcbd9e93d590f627e",
    "fast -6 mirror medium.txt": "b411e39c47790d760616a2d03b811f3f80c1068614e67858f5152580fe67cd90",
    "fast -6 mirror one": "757c1d26d5e3075a1af43b09a4fbbc38ed97fafb000b0d91417325f540827dd1",
    "fast -6 mirror random.bin": "00f87d01ba750789357f6e32902ca1bd48bbe68ff214e881a7cadaa9b58b7fcf",
    "fast -6 mirror small.txt": "90652496f4f34efa0c7534f9f7fe5876ff79610fa040b3213d7ab924290e117d",
    "fast -6 rsyncable empty": "5546e4569166013e042d1fd2b79d62b7b92a256fed6cf7287ac459d7798c9862",
    "fast -6 rsyncable large.txt":
      "5cb97ccdd24163bc92ba241565beda1957a919a7040918ea5eb15025646f9f06",
    "fast -6 rsyncable medium.txt":
      "b411e39c47790d760616a2d03b811f3f80c1068614e67858f5152580fe67cd90",
    "fast -6 rsyncable one": "757c1d26d5e3075a1af43b09a4fbbc38ed97fafb000b0d91417325f540827dd1",
    "fast -6 rsyncable random.bin":
      "5f805dda23f64fd0e16ea2cf35963dd8f0fdd7225cf2f65cb9a89920bd4b432a",
    "fast -6 rsyncable small.txt":
      "90652496f4f34efa0c7534f9f7fe5876ff79610fa040b3213d7ab924290e117d",
    "fast -6 stdout empty": "5546e4569166013e042d1fd2b79d62b7b92a256fed6cf7287ac459d7798c9862",
    "fast -6 stdout large.txt": "53af17a2138cee11752766325ddbee7ae5570936d184ef7fcbd9e93d590f627e",
    "fast -6 stdout medium.txt": "b411e39c47790d760616a2d03b811f3f80c1068614e67858f5152580fe67cd90",
    "fast -6 stdout one": "757c1d26d5e3075a1af43b09a4fbbc38ed97fafb000b0d91417325f540827dd1",
    "fast -6 stdout random.bin": "00f87d01ba750789357f6e32902ca1bd48bbe68ff214e881a7cadaa9b58b7fcf",
    "fast -6 stdout small.txt": "90652496f4f34efa0c7534f9f7fe5876ff79610fa040b3213d7ab924290e117d",
    "fast -9 beside empty": "11f371a8caceda0f72dae0357c55584620a7143ef362a03056a20af1da21504e",
    "fast -9 beside large.txt": "2bc6090408b210656662a88fd83920cb1b84fef47bc0d8dde233cd03edef3d74",
    "fast -9 beside medium.txt": "6c2128174678e255e3ba1d519029f7392beb6695094f39e2651950554718fa15",
    "fast -9 beside one": "7954c47fd43c3c94c2e3f78c4625cd854a5a8c5a75848be9b7d04f5441b8b582",
    "fast -9 beside random.bin": "c40c82206d6803a220e862bd740a0519345019d741a160e3768bfb651ed37234",
    "fast -9 beside small.txt": "583574eb7f22950d2f0c335f9b8c31dda6225f645753f8343590b0f5d3b54f4d",
    "fast -9 mirror empty": "11f371a8caceda0f72dae0357c55584620a7143ef362a03056a20af1da21504e",
    "fast -9 mirror large.txt": "2bc6090408b210656662a88fd83920cb1b84fef47bc0d8dde233cd03edef3d74",
    "fast -9 mirror medium.txt": "6c2128174678e255e3ba1d519029f7392beb6695094f39e2651950554718fa15",
    "fast -9 mirror one": "7954c47fd43c3c94c2e3f78c4625cd854a5a8c5a75848be9b7d04f5441b8b582",
    "fast -9 mirror random.bin": "c40c82206d6803a220e862bd740a0519345019d741a160e3768bfb651ed37234",
    "fast -9 mirror small.txt": "583574eb7f22950d2f0c335f9b8c31dda6225f645753f8343590b0f5d3b54f4d",
    "fast -9 rsyncable empty": "11f371a8caceda0f72dae0357c55584620a7143ef362a03056a20af1da21504e",
    "fast -9 rsyncable large.txt":
      "0544fad6f0cf4561c148db1315e86170af357fb2c07edf32cd7ca0a09d731843",
    "fast -9 rsyncable medium.txt":
      "6c2128174678e255e3ba1d519029f7392beb6695094f39e2651950554718fa15",
    "fast -9 rsyncable one": "7954c47fd43c3c94c2e3f78c4625cd854a5a8c5a75848be9b7d04f5441b8b582",
    "fast -9 rsyncable random.bin":
      "a6774388a168b99cc0fb302a64dbbeeb31d5fbccd3372a3b9054447f33fef606",
    "fast -9 rsyncable small.txt":
      "583574eb7f22950d2f0c335f9b8c31dda6225f645753f8343590b0f5d3b54f4d",
    "fast -9 stdout empty": "11f371a8caceda0f72dae0357c55584620a7143ef362a03056a20af1da21504e",
    "fast -9 stdout large.txt": "2bc6090408b210656662a88fd83920cb1b84fef47bc0d8dde233cd03edef3d74",
    "fast -9 stdout medium.txt": "6c2128174678e255e3ba1d519029f7392beb6695094f39e2651950554718fa15",
    "fast -9 stdout one": "7954c47fd43c3c94c2e3f78c4625cd854a5a8c5a75848be9b7d04f5441b8b582",
    "fast -9 stdout random.bin": "c40c82206d6803a220e862bd740a0519345019d741a160e3768bfb651ed37234",
    "fast -9 stdout small.txt": "583574eb7f22950d2f0c335f9b8c31dda6225f645753f8343590b0f5d3b54f4d",
    "zlib -6 beside empty": "5546e4569166013e042d1fd2b79d62b7b92a256fed6cf7287ac459d7798c9862",
    "zlib -6 beside large.txt": "c7c89f953e177461bcb50b985c3b6d020642fd7c4da2619b35c0975b593aa036",
    "zlib -6 beside medium.txt": "c1836518d206a161969a3e7e073f96df436727b25a676df740665e9136084387",
    "zlib -6 beside one": "757c1d26d5e3075a1af43b09a4fbbc38ed97fafb000b0d91417325f540827dd1",
    "zlib -6 beside random.bin": "3aa729d5ff7acbf756b2cd1d47bd50f34959c8bc3eec475958635c2a22d0e56a",
    "zlib -6 beside small.txt": "ae5ef0106175225e57a12ffe01f40960539584095cb29e15a31811ba345222d9",
    "zlib -6 mirror empty": "5546e4569166013e042d1fd2b79d62b7b92a256fed6cf7287ac459d7798c9862",
    "zlib -6 mirror large.txt": "c7c89f953e177461bcb50b985c3b6d020642fd7c4da2619b35c0975b593aa036",
    "zlib -6 mirror medium.txt": "c1836518d206a161969a3e7e073f96df436727b25a676df740665e9136084387",
    "zlib -6 mirror one": "757c1d26d5e3075a1af43b09a4fbbc38ed97fafb000b0d91417325f540827dd1",
    "zlib -6 mirror random.bin": "3aa729d5ff7acbf756b2cd1d47bd50f34959c8bc3eec475958635c2a22d0e56a",
    "zlib -6 mirror small.txt": "ae5ef0106175225e57a12ffe01f40960539584095cb29e15a31811ba345222d9",
    "zlib -6 rsyncable empty": "5546e4569166013e042d1fd2b79d62b7b92a256fed6cf7287ac459d7798c9862",
    "zlib -6 rsyncable large.txt":
      "0df95eba7be4043cead12b953564e6dadd3f116ab099767dad96cf91a3d932de",
    "zlib -6 rsyncable medium.txt":
      "da4d1084d001b4d2bc4650704ecb8280680b329cf5f070859f25525a2d8e8756",
    "zlib -6 rsyncable one": "757c1d26d5e3075a1af43b09a4fbbc38ed97fafb000b0d91417325f540827dd1",
    "zlib -6 rsyncable random.bin":
      "e8988aafc19fe843818db0d2fc88c3b6a276485e2f08de49b78d9866be4ec581",
    "zlib -6 rsyncable small.txt":
      "ae5ef0106175225e57a12ffe01f40960539584095cb29e15a31811ba345222d9",
    "zlib -6 stdout empty": "5546e4569166013e042d1fd2b79d62b7b92a256fed6cf7287ac459d7798c9862",
    "zlib -6 stdout large.txt": "c7c89f953e177461bcb50b985c3b6d020642fd7c4da2619b35c0975b593aa036",
    "zlib -6 stdout medium.txt": "c1836518d206a161969a3e7e073f96df436727b25a676df740665e9136084387",
    "zlib -6 stdout one": "757c1d26d5e3075a1af43b09a4fbbc38ed97fafb000b0d91417325f540827dd1",
    "zlib -6 stdout random.bin": "3aa729d5ff7acbf756b2cd1d47bd50f34959c8bc3eec475958635c2a22d0e56a",
    "zlib -6 stdout small.txt": "ae5ef0106175225e57a12ffe01f40960539584095cb29e15a31811ba345222d9",
    "zlib -9 beside empty": "11f371a8caceda0f72dae0357c55584620a7143ef362a03056a20af1da21504e",
    "zlib -9 beside large.txt": "06a26561d37dd7e29ec52ee2b9590d68ff5c580cf68d206696aa3927348f9f57",
    "zlib -9 beside medium.txt": "388a15d4418884e6bd9e9a4d42e295d3fe60f3d7ae68d2b492996ee45a9872d1",
    "zlib -9 beside one": "7954c47fd43c3c94c2e3f78c4625cd854a5a8c5a75848be9b7d04f5441b8b582",
    "zlib -9 beside random.bin": "a7c65d01ddf5ccc77b2d4990e8413d76d6afc173116ffa2f7cfa25f64556c8fe",
    "zlib -9 beside small.txt": "dbf4d44acabd27333afeb92224690c4f14866efe2105e31ad8bcb226813c8d11",
    "zlib -9 mirror empty": "11f371a8caceda0f72dae0357c55584620a7143ef362a03056a20af1da21504e",
    "zlib -9 mirror large.txt": "06a26561d37dd7e29ec52ee2b9590d68ff5c580cf68d206696aa3927348f9f57",
    "zlib -9 mirror medium.txt": "388a15d4418884e6bd9e9a4d42e295d3fe60f3d7ae68d2b492996ee45a9872d1",
    "zlib -9 mirror one": "7954c47fd43c3c94c2e3f78c4625cd854a5a8c5a75848be9b7d04f5441b8b582",
    "zlib -9 mirror random.bin": "a7c65d01ddf5ccc77b2d4990e8413d76d6afc173116ffa2f7cfa25f64556c8fe",
    "zlib -9 mirror small.txt": "dbf4d44acabd27333afeb92224690c4f14866efe2105e31ad8bcb226813c8d11",
    "zlib -9 rsyncable empty": "11f371a8caceda0f72dae0357c55584620a7143ef362a03056a20af1da21504e",
    "zlib -9 rsyncable large.txt":
      "a3c63f10850e4e1b596ec438ba98e442e44f659a65324ad1d17cb293f6f09e8e",
    "zlib -9 rsyncable medium.txt":
      "edcd6ea8d20075823cc7fe66c1dc6e9334d7c57eb30b21e9b4ebae526baeea28",
    "zlib -9 rsyncable one": "7954c47fd43c3c94c2e3f78c4625cd854a5a8c5a75848be9b7d04f5441b8b582",
    "zlib -9 rsyncable random.bin":
      "014686d5210683eefd152fc82a26e3f9f1a115b761ddd220082b3cbf60319b84",
    "zlib -9 rsyncable small.txt":
      "dbf4d44acabd27333afeb92224690c4f14866efe2105e31ad8bcb226813c8d11",
    "zlib -9 stdout empty": "11f371a8caceda0f72dae0357c55584620a7143ef362a03056a20af1da21504e",
    "zlib -9 stdout large.txt": "06a26561d37dd7e29ec52ee2b9590d68ff5c580cf68d206696aa3927348f9f57",
    "zlib -9 stdout medium.txt": "388a15d4418884e6bd9e9a4d42e295d3fe60f3d7ae68d2b492996ee45a9872d1",
    "zlib -9 stdout one": "7954c47fd43c3c94c2e3f78c4625cd854a5a8c5a75848be9b7d04f5441b8b582",
    "zlib -9 stdout random.bin": "a7c65d01ddf5ccc77b2d4990e8413d76d6afc173116ffa2f7cfa25f64556c8fe",
    "zlib -9 stdout small.txt": "dbf4d44acabd27333afeb92224690c4f14866efe2105e31ad8bcb226813c8d11",
  ]
}

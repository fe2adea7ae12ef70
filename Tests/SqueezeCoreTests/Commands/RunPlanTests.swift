import SqueezeSystem
import Testing

@testable import SqueezeCore
@testable import TestSupport

/// The plan gives each listed file one disposition and leaves the listing as discovery made
/// it; the execution's folders leave the plan as it was made.
@Suite struct RunPlanTests {
  /// Lists `arguments` (into `mirror` when given) and plans the run, as ``RunCommand`` does
  /// for a compression.
  static func plan(
    _ arguments: [String], mirror: String? = nil, removesSources: Bool = false
  ) async throws -> (list: FileList, plan: RunPlan) {
    let bases = BaseDirectories()
    var options = DiscoveryOptions()
    var destination = OutputPlan.Destination.besideSources
    if let mirror {
      destination = .mirror(base: try bases.open(RawPath(mirror)), path: RawPath(mirror))
      options.mirrorsTree = true
      options.wanted = .anything
    }
    let list = Discovery.run(
      arguments: arguments.map { RawPath($0) }, options: options, bases: bases,
      namer: TemporaryNamer()
    ).files
    var settings = FileSettings(
      plan: OutputPlan(destination: destination, naming: .addSuffix(".gz")))
    settings.wrapsCompressedNames = mirror != nil
    settings.removesSources = removesSources
    let plan = await RunPlan.make(
      list: list, settings: settings, bases: bases, linksHardLinks: true, width: 2)
    return (list, plan)
  }

  @Test func anArgumentThatCollidesInAMirrorIsLeftOutByThePlanNotTheListing() async throws {
    let folder = TemporaryFolder("plan-collide")
    try folder.write("a/x/one.txt", text: "one")
    try folder.write("b/x/two.txt", text: "two")
    try folder.makeFolder("M")
    let (list, plan) = try await Self.plan(
      [folder.url("a/x"), folder.url("b/x")], mirror: folder.url("M"))
    let names = list.files.map { list.name(of: $0) }
    #expect(names == ["one.txt", "two.txt"], "the listing keeps both arguments' files")
    #expect(plan.dispositions == [.work(existing: .absent), .leftOut])
    #expect(plan.failures.map(\.path) == [RawPath(folder.url("b/x"))])
    #expect(plan.progressTotals == ProgressTotals(files: 1, bytes: 3, upToDate: 0))
  }

  @Test func eachFileHasOneDisposition() async throws {
    let folder = TemporaryFolder("plan-dispositions")
    try folder.write("in/current.txt", text: "current")
    try folder.write("in/new.txt", text: "new")
    let first = try SqueezeBinary.run([folder.url("in/current.txt")])
    #expect(first.status == 0, "\(first.stderrText)")
    // The same folder named twice: its files are listed twice, planned once.
    let (list, plan) = try await Self.plan([folder.url("in"), folder.url("in/")])
    #expect(list.files.count == 4)
    #expect(
      plan.dispositions == [.upToDate, .work(existing: .absent), .leftOut, .leftOut])
    #expect(plan.progressTotals == ProgressTotals(files: 1, bytes: 3, upToDate: 1))
  }

  @Test func foldersThatCouldNotBeMadeLeaveTheirFilesOutOfTheExecutionNotThePlan() async throws {
    let folder = TemporaryFolder("plan-folders")
    try folder.write("S/ok/a.txt", text: "a")
    try folder.write("S/blocked/b.txt", text: "bb")
    try folder.makeFolder("M")
    let (list, plan) = try await Self.plan([folder.url("S/")], mirror: folder.url("M"))
    var folders = try #require(plan.mirror)
    let blocked = try #require(folders.folders.firstIndex { $0.path == "blocked" })
    folders.usable = folders.folders.indices.map { $0 != blocked }
    let index = try #require(list.files.firstIndex { list.name(of: $0) == "b.txt" })
    #expect(plan.disposition(of: index, in: list, folders: folders) == .leftOut)
    #expect(plan.dispositions[index] == .work(existing: .absent), "the plan is as it was made")
    #expect(
      plan.totals(of: list, folders: folders) == ProgressTotals(files: 1, bytes: 1, upToDate: 0))
  }
}

import Testing

@testable import SqueezeCore
@testable import SqueezeSystem

@Suite struct RunSettingsTests {
  @Test func theWidthIsResolvedOnceFromJobsOrTheAllowance() {
    let allowance = CPUAllowance(affinityCPUs: 3, quota: nil)
    #expect(RunSettings(options: Options(), cpus: allowance).jobs == 3)
    var options = Options()
    options.jobs = 7
    #expect(RunSettings(options: options, cpus: allowance).jobs == 7)
  }
}

import Testing

@testable import SqueezeCLI
@testable import SqueezeCore
@testable import SqueezeSystem

@Suite struct RunConfigurationTests {
  @Test func theWidthIsResolvedOnceFromJobsOrTheAllowance() {
    let allowance = CPUAllowance(affinityCPUs: 3, quota: nil)
    #expect(RunConfiguration(options: Options(), cpus: allowance).jobs == 3)
    var options = Options()
    options.jobs = 7
    #expect(RunConfiguration(options: options, cpus: allowance).jobs == 7)
  }
}

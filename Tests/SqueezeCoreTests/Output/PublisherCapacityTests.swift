import Testing

@testable import SqueezeCore

/// How many outputs may wait for the publisher, from the descriptors the process may open:
/// a quarter of them between 16 and 1,024, and under a low limit only as many as fit beside
/// the run's other descriptors.
@Suite struct PublisherCapacityTests {
  @Test(arguments: [
    (UInt64(1_024), 256), (4_096, 1_024), (20_000, 1_024), (UInt64.max, 1_024), (256, 64),
    (64, 16),
  ])
  func aQuarterOfTheLimitBetween16And1024(limit: UInt64, capacity: Int) {
    #expect(Publisher.capacity(forDescriptorLimit: limit) == capacity)
  }

  /// Two descriptors a waiting output at most (its folder while it waits, and while it waits
  /// to be let go of), beside the others the run keeps open: 16 outputs under a hard limit
  /// of 32 made most files of a tree of small folders fail with `EMFILE`.
  @Test(arguments: [(UInt64(63), 16), (48, 9), (40, 5), (32, 1), (24, 1), (0, 1)])
  func underALowLimitAsManyAsFitAndAtLeastOne(limit: UInt64, capacity: Int) {
    let given = Publisher.capacity(forDescriptorLimit: limit)
    #expect(given == capacity)
    if limit > Publisher.descriptorsBesideQueue + 2 {
      #expect(UInt64(2 * given) + Publisher.descriptorsBesideQueue <= limit)
    }
  }
}

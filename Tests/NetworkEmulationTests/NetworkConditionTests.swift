import Testing

@testable import NetworkEmulation

@Suite("NetworkCondition: the scenarios' named networks")
struct NetworkConditionTests {
    @Test("the named conditions match issue 6's scenario definitions")
    func definitions() throws {
        #expect(!NetworkCondition.quiet.isImpaired)
        let jitter = try NetworkCondition.named("jitter")
        #expect(jitter.upstream.delay == 0.020 && jitter.upstream.jitter == 0.010)
        #expect(jitter.downstream == jitter.upstream)
        let asymmetric = try NetworkCondition.named("asymmetric")
        #expect(abs((asymmetric.upstream.delay + asymmetric.downstream.delay) / 2 - 0.050) < 1e-12)
        #expect(abs(asymmetric.upstream.delay - asymmetric.downstream.delay - 0.030) < 1e-12)
        #expect(try NetworkCondition.named("loss").upstream.loss == 0.01)
        for condition in NetworkCondition.all { try condition.upstream.validate() }
    }

    @Test("an unknown name is an error that lists the known ones")
    func unknown() {
        #expect {
            _ = try NetworkCondition.named("lunar")
        } throws: { error in
            "\(error)".contains("quiet, jitter, asymmetric, loss")
        }
    }
}

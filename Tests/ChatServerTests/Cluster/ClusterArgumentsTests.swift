import Testing
@testable import ChatServerCore

@Suite("Chat server: the several-nodes options")
struct ClusterArgumentsTests {
    @Test func clusterNodeAndClusterNames_areRead_andTheNodeNameDefaultsFromTheServerName() throws {
        var options = ChatServerConfiguration.CommandLineOptions()
        let configuration = try ChatServerConfiguration(
            arguments: ["--server-name", "irc.a.local", "--cluster", "nats://127.0.0.1:4222", "--cluster-name", "chat_1"], options: &options)
        #expect(options.cluster == "nats://127.0.0.1:4222")
        #expect(options.nodeName == nil)
        #expect(options.clusterName == "chat_1")
        #expect(configuration.defaultNodeName == "irc-a-local")
        _ = try ChatServerConfiguration(arguments: ["--node-name", "node-7"], options: &options)
        #expect(options.nodeName == "node-7")
        // Alone by default.
        var alone = ChatServerConfiguration.CommandLineOptions()
        _ = try ChatServerConfiguration(arguments: [], options: &alone)
        #expect(alone.cluster == nil && alone.clusterName == "chat")
    }

    @Test(arguments: [
        (["--cluster"], "--cluster needs a value"),
        (["--cluster", "127.0.0.1:4222"], "--cluster needs a NATS URL such as nats://127.0.0.1:4222"),
        (["--node-name", "a.b"], "--node-name: use letters, digits, '-' and '_'"),
        (["--node-name", ""], "--node-name: use letters, digits, '-' and '_'"),
        (["--cluster-name", "x y"], "--cluster-name: use letters, digits, '-' and '_'"),
    ])
    func badClusterOptions_nameTheOptionAndWhy(arguments: [String], message: String) {
        var options = ChatServerConfiguration.CommandLineOptions()
        #expect(throws: ChatServerConfiguration.ArgumentError(description: message)) {
            _ = try ChatServerConfiguration(arguments: arguments, options: &options)
        }
    }
}

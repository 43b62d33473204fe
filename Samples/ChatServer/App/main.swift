// chat-server: an IRC server on Mailbox actors. `chat-server --help` lists the options.
// With `--cluster nats://HOST:PORT` it is one node of a chat cluster (docs/ChatServer.md,
// "Several nodes").
import ChatServerCore
import Dispatch
import Foundation
import Mailbox
import MailboxCluster
import MailboxNet

func write(_ text: String, to handle: FileHandle) {
    handle.write(Data((text + "\n").utf8))
}

var options = ChatServerConfiguration.CommandLineOptions()
let configuration: ChatServerConfiguration
do {
    configuration = try ChatServerConfiguration(arguments: Array(CommandLine.arguments.dropFirst()), options: &options)
} catch {
    write("chat-server: \(error)\n\(ChatServerConfiguration.usage)", to: .standardError)
    exit(2)
}
if options.help {
    write(ChatServerConfiguration.usage, to: .standardOutput)
    exit(0)
}

ProcessLimits.ignoreSIGPIPE()
_ = ProcessLimits.raiseOpenFileLimit()

/// Joins the chat cluster at `url`; a node the others down exits (its users were already
/// quit and its nicks released there): restart it to rejoin as a new incarnation.
@MainActor
func joinCluster(_ url: String) async -> (ChatServer, ClusterSystem) {
    var settings = ClusterConfiguration(nodeName: options.nodeName ?? configuration.defaultNodeName, nats: url)
    settings.clusterName = options.clusterName
    settings.nats.maxReconnectAttempts = -1
    settings.nats.reconnectWait = .milliseconds(200)
    do {
        let cluster = try await ClusterSystem.join(ActorSystem(name: "chat-server"), settings)
        let server = try await ChatServer.node(configuration: configuration, cluster: cluster)
        let me = cluster.node
        let verbose = options.verbose
        cluster.memberEvents.observeValues { event in
            if verbose { write("chat-server: member \(event)", to: .standardError) }
            guard event.member.node == me, event.member.status == .down else { return }
            write("chat-server: this node (\(me)) was downed by the cluster; exiting (start it again to rejoin)", to: .standardError)
            exit(3)
        }
        write("chat-server node \(me) joined \(url)", to: .standardOutput)
        return (server, cluster)
    } catch {
        write("chat-server: cannot join the cluster at \(url): \(error)", to: .standardError)
        exit(1)
    }
}

let server: ChatServer
let cluster: ClusterSystem?
if let url = options.cluster {
    (server, cluster) = await joinCluster(url)
} else {
    do {
        server = try ChatServer(configuration: configuration)
    } catch {
        write("chat-server: \(error)", to: .standardError)
        exit(1)
    }
    cluster = nil
}
let address: SocketAddress
do {
    if options.verbose {
        server.events.observeValues { event in write("chat-server: \(event)", to: .standardError) }
    }
    address = try server.listen()
} catch {
    write("chat-server: \(error)", to: .standardError)
    exit(1)
}
write("chat-server listening on \(address)", to: .standardOutput)

// SIGINT/SIGTERM run the actor system's coordinated shutdown: stop accepting (service-unbind),
// tell every client and flush (service-requests-done), stop the actors, then (a node) leave the
// cluster and exit 0.
server.shutdownOnTerminationSignals {
    guard let cluster else { exit(0) }
    Task {
        await cluster.leave()
        exit(0)
    }
}
// Runs until a signal or the cluster ends the process.
while true {
    try? await Task.sleep(for: .seconds(3600))
}

// cluster-node: one node of a Mailbox cluster on NATS, driven by commands on standard input.
// docs/Cluster.md runs two of them on one machine; the multi-process tests drive several.
//
//   cluster-node --name a [--nats nats://127.0.0.1:4222] [--cluster demo] [--down-after 5] [--window 65536]
//
// Every node spawns an `echo` actor registered under the cluster receptionist's key "echo",
// and a distributed actor `Greeter`. Commands (one per line):
//   members               the members as this node sees them
//   listing               how many echo actors the receptionist lists
//   wait-listing N        prints "listing N" once N echo actors are listed
//   tell N                sends every other node's echo N numbered messages (`send`: waits for
//                         room in the window to the node, loses none)
//   flood N               tells every other node's echo N numbered messages (`tell`: drops past
//                         the window); prints "flooded <enqueued> <dropped>"
//   drops                 prints "drops <outboundDrops>"
//   stats                 asks every echo (this node's too) what it received
//   watch                 watches every other node's echo ("terminated <node>" when one goes)
//   greeter               prints this node's greeter ID
//   greet <ID> <name>     calls the greeter <ID> (on any node)
//   leave                 leaves the cluster and exits
// A node the others downed (it was stopped or cut off too long) rejoins under a new incarnation.
import Distributed
import Foundation
import Mailbox
import MailboxCluster
import MailboxNATS
import Synchronization

/// What an echo actor is told.
enum Echo: Codable, Sendable {
    /// A numbered message from a node: numbers from one sender must arrive in order.
    case number(Int, from: String)
    case stats(replyTo: ActorRef<EchoStats>)
}

/// What an echo actor has received.
struct EchoStats: Codable, Sendable {
    var node: String
    var received: Int
    var outOfOrder: Int
}

func echoBehavior(node: String, last: [String: Int] = [:], received: Int = 0, outOfOrder: Int = 0) -> Behavior<Echo> {
    .receiveMessage { message in
        switch message {
        case let .number(number, from):
            var last = last
            let inOrder = number == (last[from] ?? -1) + 1
            last[from] = number
            return echoBehavior(node: node, last: last, received: received + 1, outOfOrder: outOfOrder + (inOrder ? 0 : 1))
        case let .stats(replyTo):
            replyTo.tell(EchoStats(node: node, received: received, outOfOrder: outOfOrder))
            return .same
        }
    }
}

distributed actor Greeter {
    typealias ActorSystem = ClusterSystem
    let node: String

    init(node: String, actorSystem: ClusterSystem) {
        self.node = node
        self.actorSystem = actorSystem
    }

    distributed func greet(_ name: String) -> String {
        "Hello, \(name), from \(node)!"
    }
}

func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

// MARK: Options

struct Options: Sendable {
    var name = "node"
    var nats = "nats://127.0.0.1:4222"
    var cluster = "demo"
    var downAfter = 5.0
    var window = 65_536

    init(_ arguments: [String]) {
        var arguments = arguments
        while !arguments.isEmpty {
            let option = arguments.removeFirst()
            guard let value = arguments.first else { fail("\(option) needs a value") }
            arguments.removeFirst()
            switch option {
            case "--name": name = value
            case "--nats": nats = value
            case "--cluster": cluster = value
            case "--down-after": downAfter = Double(value) ?? downAfter
            case "--window": window = Int(value) ?? window
            default: fail("unknown option \(option)")
            }
        }
    }
}

func fail(_ text: String) -> Never {
    FileHandle.standardError.write(Data("cluster-node: \(text)\n".utf8))
    exit(2)
}

let echoKey = ServiceKey<Echo>("echo")

/// One incarnation of this node: a node that was downed joins again as a new one.
final class Node: Sendable {
    let cluster: ClusterSystem
    let echo: ActorRef<Echo>
    let greeter: Greeter

    init(cluster: ClusterSystem, name: String, generation: Int) throws {
        self.cluster = cluster
        echo = try cluster.system.spawn(echoBehavior(node: name), name: "echo-\(generation)")
        greeter = Greeter(node: name, actorSystem: cluster)
        cluster.receptionist.register(echo, with: echoKey)
    }
}

/// The process: its options, its actor system, and the node's current incarnation.
final class Process: Sendable {
    let options: Options
    let system = ActorSystem(name: "demo")
    let current = Mutex<Node?>(nil)

    init(options: Options) {
        self.options = options
    }

    var node: Node? { current.withLock { $0 } }

    func join(generation: Int) async {
        var configuration = ClusterConfiguration(nodeName: options.name, nats: options.nats)
        configuration.clusterName = options.cluster
        configuration.downAfter = .milliseconds(Int(options.downAfter * 1000))
        configuration.outboundWindow = options.window
        configuration.nats.maxReconnectAttempts = -1
        configuration.nats.retryOnFailedConnect = true
        configuration.nats.reconnectWait = .milliseconds(200)
        do {
            let cluster = try await ClusterSystem.join(system, configuration)
            let node = try Node(cluster: cluster, name: options.name, generation: generation)
            current.withLock { $0 = node }
            cluster.connection.events.observeValues { event in
                if case .connected = event { say("nats connected") }
                if case .disconnected = event { say("nats disconnected") }
            }
            cluster.memberEvents.observeValues { [self] event in
                say("member \(event.member.node.name) \(event.member.status)")
                if event.member.node == cluster.node, event.member.status == .down {
                    say("downed \(cluster.node)")
                    // The old incarnation's echo leaves the listings; the new one registers its own.
                    cluster.receptionist.deregister(node.echo, from: echoKey)
                    Task {
                        await cluster.leave()
                        await self.join(generation: generation + 1)
                    }
                }
            }
            say("ready \(cluster.node)")
        } catch {
            fail("\(error)")
        }
    }
}

let process = Process(options: Options(Array(CommandLine.arguments.dropFirst())))
let name = process.options.name
await process.join(generation: 1)

// MARK: Commands

func others(_ node: Node) -> [ActorRef<Echo>] {
    node.cluster.receptionist.find(echoKey).filter { $0.address.node != nil }
}

while let line = readLine() {
    let words = line.split(separator: " ").map(String.init)
    guard let command = words.first, let node = process.node else { continue }
    switch command {
    case "members":
        say("members " + node.cluster.members.value.map { "\($0.node.name)=\($0.status)" }.joined(separator: ","))
    case "listing":
        say("listing \(node.cluster.receptionist.find(echoKey).count)")
    case "wait-listing":
        let wanted = Int(words.dropFirst().first ?? "") ?? 1
        let listing = node.cluster.receptionist.listing(for: echoKey)
        let done = Atomic(false)
        listing.producer.startWithValues { refs in
            if refs.count == wanted, !done.exchange(true, ordering: .relaxed) {
                say("listing \(wanted)")
            }
        }
    case "tell":
        let count = Int(words.dropFirst().first ?? "") ?? 1
        for target in others(node) {
            var number = 0
            while number < count {
                // `send` waits while the window to the node is full: no number is lost.
                try? await target.send(.number(number, from: name))
                number += 1
            }
        }
        say("told \(count)")
    case "flood":
        let count = Int(words.dropFirst().first ?? "") ?? 1
        var enqueued = 0
        for target in others(node) {
            for number in 0..<count where target.tell(.number(number, from: name + "/flood")) == .enqueued {
                enqueued += 1
            }
        }
        say("flooded \(enqueued) \(count * others(node).count - enqueued)")
    case "drops":
        say("drops \(node.cluster.statistics.outboundDrops)")
    case "stats":
        for target in node.cluster.receptionist.find(echoKey).sorted(by: { $0.address.description < $1.address.description }) {
            do {
                let stats = try await target.ask(timeout: .seconds(30)) { .stats(replyTo: $0) }
                say("stats \(stats.node) \(stats.received) \(stats.outOfOrder)")
            } catch {
                say("stats-failed \(target.address.node?.name ?? "local") \(error)")
            }
        }
        say("stats done")
    case "watch":
        for target in others(node) {
            let nodeName = target.address.node?.name ?? "?"
            target.onTermination { failure in say("terminated \(nodeName) \(failure.map { "\($0)" } ?? "")") }
        }
        say("watching \(others(node).count)")
    case "greeter":
        say("greeter \(node.greeter.id)")
    case "greet":
        guard words.count >= 3, let id = ActorAddress(parsing: words[1]) else {
            say("greet-failed usage")
            continue
        }
        do {
            let text = try await Greeter.resolve(id: id, using: node.cluster).greet(words[2])
            say("greeting \(text)")
        } catch {
            say("greet-failed \(error)")
        }
    case "leave":
        await node.cluster.leave()
        say("left")
        _ = await process.system.shutdown()
        exit(0)
    default:
        say("unknown \(command)")
    }
}
await process.node?.cluster.leave()

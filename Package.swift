// swift-tools-version:6.0
// Mailbox: an embedded, actor-based, message-driven runtime with ReactiveSwift-style streams.
// Zero third-party packages: only the toolchain's modules (stdlib, Synchronization, Dispatch,
// Foundation, Distributed). Do not add `dependencies:`.
import PackageDescription

let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "Mailbox",
    products: [
        .library(name: "Mailbox", targets: ["Mailbox"]),
        .library(name: "MailboxTestKit", targets: ["MailboxTestKit"]),
        .library(name: "MailboxNet", targets: ["MailboxNet"]),
        .library(name: "MailboxNATS", targets: ["MailboxNATS"]),
        .library(name: "MailboxCluster", targets: ["MailboxCluster"]),
        .executable(name: "mailbox-bench", targets: ["MailboxBenchmarks"]),
        .executable(name: "calculator", targets: ["CalculatorApp"]),
        .executable(name: "chat-server", targets: ["ChatServerApp"]),
        .executable(name: "chat-bench", targets: ["ChatBench"]),
        .executable(name: "cluster-node", targets: ["ClusterNode"]),
    ],
    targets: [
        .target(
            name: "Mailbox",
            path: "Sources/Mailbox",
            swiftSettings: strictSettings
        ),
        // Non-blocking TCP (listeners, connections, send queues that close or push back when
        // full) on Dispatch sources; the chat server, the NATS client and the inspector use it.
        .target(
            name: "MailboxNet",
            dependencies: ["Mailbox"],
            path: "Sources/MailboxNet",
            swiftSettings: strictSettings
        ),
        // A client of NATS (the messaging engine the cluster runs on) over MailboxNet:
        // pub/sub, request/reply, queue groups, reconnect, JetStream key/value.
        .target(
            name: "MailboxNATS",
            dependencies: ["Mailbox", "MailboxNet"],
            path: "Sources/MailboxNATS",
            swiftSettings: strictSettings
        ),
        // Actors across processes on NATS: remote refs, death watch, membership, the cluster
        // receptionist.
        .target(
            name: "MailboxCluster",
            dependencies: ["Mailbox", "MailboxNATS"],
            path: "Sources/MailboxCluster",
            swiftSettings: strictSettings
        ),
        .target(
            name: "MailboxTestKit",
            dependencies: ["Mailbox"],
            path: "Sources/MailboxTestKit",
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "MailboxBenchmarks",
            dependencies: ["Mailbox", "MailboxNATS", "MailboxCluster"],
            path: "Sources/MailboxBenchmarks",
            swiftSettings: strictSettings
        ),
        // Samples/Calculator: the pure model and the store in a library the tests can import,
        // and the console executable `calculator`.
        .target(
            name: "CalculatorCore",
            dependencies: ["Mailbox"],
            path: "Samples/Calculator/Core",
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "CalculatorApp",
            dependencies: ["CalculatorCore", "Mailbox"],
            path: "Samples/Calculator/App",
            swiftSettings: strictSettings
        ),
        // Samples/ChatServer: an IRC server on Mailbox actors. The protocol and the server's actors
        // (on MailboxNet's sockets; on several nodes over MailboxCluster) in a library the tests can import; the executable `chat-server`;
        // the load generator `chat-bench` (plain sockets, no dependency on the server's code; it
        // takes only the runtime's lock box).
        .target(
            name: "ChatServerCore",
            dependencies: ["Mailbox", "MailboxNet", "MailboxCluster"],
            path: "Samples/ChatServer/Core",
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "ChatServerApp",
            dependencies: ["ChatServerCore", "Mailbox", "MailboxNet", "MailboxCluster", "MailboxNATS"],
            path: "Samples/ChatServer/App",
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "ChatBench",
            dependencies: ["Mailbox"],   // for its one value box, LockedValueBox
            path: "Samples/ChatServer/Bench",
            exclude: ["README.md", "compare.sh"],
            swiftSettings: strictSettings
        ),
        // Samples/ClusterNode: one node of a cluster driven by commands on standard input (the
        // cluster guide's two-node walk-through, and the multi-process tests).
        .executableTarget(
            name: "ClusterNode",
            dependencies: ["Mailbox", "MailboxCluster", "MailboxNATS"],
            path: "Samples/ClusterNode",
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "ChatServerTests",
            dependencies: ["ChatServerCore", "Mailbox", "MailboxNet", "MailboxTestKit", "NetTestSupport"],
            path: "Tests/ChatServerTests",
            swiftSettings: strictSettings
        ),
        // Helpers the socket, chat server and NATS tests share (probes, raw reads, seeds).
        .target(
            name: "NetTestSupport",
            dependencies: ["MailboxNet"],
            path: "Tests/NetTestSupport",
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "MailboxNetTests",
            dependencies: ["MailboxNet", "Mailbox", "NetTestSupport"],
            path: "Tests/MailboxNetTests",
            swiftSettings: strictSettings
        ),
        // Helpers the NATS client and cluster tests share (the server's environment, servers of
        // a test's own, child processes, collectors).
        .target(
            name: "NATSTestSupport",
            dependencies: ["MailboxNATS", "MailboxNet", "Mailbox", "NetTestSupport"],
            path: "Tests/NATSTestSupport",
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "MailboxNATSTests",
            dependencies: ["MailboxNATS", "MailboxNet", "Mailbox", "NetTestSupport", "NATSTestSupport"],
            path: "Tests/MailboxNATSTests",
            swiftSettings: strictSettings
        ),
        // The simulated cluster: an in-memory NATS on a TestScheduler with seeded faults, and
        // nodes on it (docs/Cluster.md, "Simulation").
        .target(
            name: "ClusterSimulation",
            dependencies: ["MailboxCluster", "MailboxNATS", "Mailbox", "MailboxTestKit"],
            path: "Tests/ClusterSimulation",
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "MailboxClusterTests",
            dependencies: ["MailboxCluster", "MailboxNATS", "Mailbox", "NetTestSupport", "NATSTestSupport", "MailboxTestKit", "ClusterSimulation"],
            path: "Tests/MailboxClusterTests",
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "CalculatorTests",
            dependencies: ["CalculatorCore", "Mailbox"],
            path: "Tests/CalculatorTests",
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "MailboxTests",
            dependencies: ["Mailbox"],
            path: "Tests/MailboxTests",
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "FaultInjectionTests",
            dependencies: ["Mailbox", "MailboxTestKit"],
            path: "Tests/FaultInjectionTests",
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "MailboxTestKitTests",
            dependencies: ["Mailbox", "MailboxTestKit"],
            path: "Tests/MailboxTestKitTests",
            swiftSettings: strictSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)

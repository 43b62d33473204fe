// chat-server: an IRC server on Mailbox actors. `chat-server --help` lists the options.
import ChatServerCore
import Dispatch
import Foundation
import Mailbox
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

let server: ChatServer
let address: SocketAddress
do {
    server = try ChatServer(configuration: configuration)
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
// tell every client and flush (service-requests-done), stop the actors, then exit 0.
server.shutdownOnTerminationSignals { exit(0) }
dispatchMain()

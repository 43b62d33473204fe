import Testing
@testable import ChatServerCore

print("chat-server: not yet")

// ChatServerCore: an IRC server (RFC 1459 / RFC 2812 as clients use them today) on Mailbox actors.
//
// - `Protocol/`: messages, line framing, case mapping, names and masks (pure values, no I/O).
// - The sockets come from `MailboxNet` (non-blocking TCP on Dispatch sources).
// - `Server/`: the actors — listener, sessions, channels, the nick registry — and their supervision.

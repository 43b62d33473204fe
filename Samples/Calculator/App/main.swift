import CalculatorCore
import Mailbox

// `swift run calculator`: type keys, one or more per line, and see the display after each line.
//   0-9 .  digits and the decimal point
//   + - * /  operators      =  equal
//   c clear   s change sign   %  percent
// End with Ctrl-D (end of input).

let system = ActorSystem(name: "calculator")
let store = try makeCalculatorStore(system: system)
print("keys: 0-9 . + - * / = c (clear) s (change sign) % (percent); Ctrl-D quits")
print(store.state.value.display)
while let line = readLine() {
    print(await handleLine(line, store: store))
}
await system.shutdown()

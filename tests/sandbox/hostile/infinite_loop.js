// attack: busy loop (JavaScript)
// verdict: timeout
// limits: time_s=0.5 wall_s=1 memory_mb=256
const deadline = Date.now() + 20000;  // safety net: never outlive a broken sandbox by much
while (Date.now() < deadline) {}
console.log("ESCAPED: ran 20 s with time_s=0.5");

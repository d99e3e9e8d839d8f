// attack: write to stdout as fast as possible (synchronous writes)
// verdict: output_limit|runtime_error
// limits: time_s=1 wall_s=2 memory_mb=256 output_bytes=65536
// check: output_bounded
const fs = require("fs");
const chunk = Buffer.alloc(1 << 20, 65);
const end = Date.now() + 20000;
while (Date.now() < end) fs.writeSync(1, chunk);

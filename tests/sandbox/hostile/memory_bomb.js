// attack: allocate and touch memory 1 MiB at a time, outside the JavaScript heap (Buffers)
// verdict: memory_limit|runtime_error
// limits: time_s=2 wall_s=4 memory_mb=192
const chunks = [];
for (let i = 0; i < 4096; i++) chunks.push(Buffer.alloc(1 << 20, 120));  // 4 GiB cap
console.log(`ESCAPED: touched ${chunks.length} MiB with memory_mb=192`);

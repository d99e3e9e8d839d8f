// attack: connect to a TCP server the test runs on the host's 127.0.0.1 (JavaScript, net)
// verdict: ok
// limits: time_s=1 wall_s=3 memory_mb=256
// stdin: {port}
// check: no_connection
// bwrap_only: true
// reason: without a network namespace the host's loopback is reachable
const net = require("net");
const port = Number(require("fs").readFileSync(0, "utf8").trim().split(/\s+/)[0]);
let left = 2;
for (const host of ["127.0.0.1", "localhost"]) {
  const s = net.connect({ host, port, timeout: 300 });
  s.on("connect", () => { s.write("ESCAPED hello\n"); console.log(`ESCAPED: connected to ${host}:${port}`); s.end(); });
  s.on("timeout", () => s.destroy(new Error("timeout")));
  s.on("error", (e) => console.log(`blocked: ${host}:${port}: ${e.code || e.message}`));
  s.on("close", () => { if (--left === 0) console.log("done"); });
}

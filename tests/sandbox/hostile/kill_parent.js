// attack: SIGKILL the parent (the fork server / supervisor) and every process it may signal
// verdict: runtime_error|ok
// limits: time_s=1 wall_s=2 memory_mb=256
// The verdict must not be sandbox_error and the next run must work. Refuses to kill the
// test process itself (argv[4]) so a broken sandbox cannot take pytest down.
const testpid = Number(process.argv[5] || -1);
const ppid = process.ppid;
if (ppid === testpid) {
  console.log("ESCAPED: the parent is the test process itself (no supervisor between)");
} else if (ppid > 1) {
  for (const target of [ppid, -ppid]) {
    try { process.kill(target, "SIGKILL"); console.log(`killed ${target}`); }
    catch (e) { console.log(`blocked: kill ${target}: ${e.code}`); }
  }
}
const end = Date.now() + 300;
while (Date.now() < end) {}
console.log("still running");

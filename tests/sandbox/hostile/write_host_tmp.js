// attack: create files in /tmp, /var/tmp and /dev/shm, which must be private to the run (JavaScript)
// verdict: ok
// limits: time_s=1 wall_s=2 memory_mb=256
// bwrap_only: true
// reason: without a mount namespace these world-writable directories are the host's own
const fs = require("fs");
const token = process.argv[2] || "x";
for (const d of ["/tmp", "/var/tmp", "/dev/shm"]) {
  const path = `${d}/codegym-hostile-${token}`;
  try { fs.writeFileSync(path, "written from the sandbox\n"); console.log(`wrote ${path} (must be private)`); }
  catch (e) { console.log(`blocked: ${path}: ${e.code}`); }
}

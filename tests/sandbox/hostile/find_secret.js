// attack: search the filesystem for hidden tests / expected outputs (a secret the test planted; JavaScript)
// verdict: ok|timeout
// limits: time_s=2 wall_s=3 memory_mb=256
// check: secret_hidden
// bwrap_only: true
// reason: the repository and world-readable task files stay visible without a mount namespace
const fs = require("fs");
const path = require("path");
const MARK = "CODEGYM" + "-SECRET-";  // split so this source does not match itself
const SKIP = new Set(["/proc", "/sys", "/dev", "/usr", "/lib", "/lib64", "/bin", "/sbin", "/boot",
                      "/var/lib", "/var/cache", "/root/.pyenv", "/root/.cargo", "/root/.npm", process.cwd()]);
const end = Date.now() + 1600;
const roots = [process.argv[3], process.argv[4], "/work", "/tmp", "/root", "/home", "/srv", "/opt", "/"];
const seen = new Set();
const stack = roots.filter(Boolean);
while (stack.length && Date.now() < end) {
  const dir = stack.pop();
  if (seen.has(dir) || SKIP.has(dir)) continue;
  seen.add(dir);
  let entries = [];
  try { entries = fs.readdirSync(dir, { withFileTypes: true }); } catch (e) { continue; }
  for (const e of entries) {
    const p = path.join(dir, e.name);
    if (e.isDirectory() && e.name !== ".git") stack.push(p);
    else if (e.isFile()) {
      try {
        if (fs.statSync(p).size > (1 << 20)) continue;
        const data = fs.readFileSync(p, "latin1");
        const i = data.indexOf(MARK);
        if (i >= 0) console.log(`ESCAPED: secret in ${p}: ${data.slice(i, i + 80)}`);
      } catch (err) { /* unreadable */ }
    }
  }
}
console.log("search finished");

// One file over 450 lines: every path of `lab down` in one sandbox of fakes (iptables, ip, docker, kind) built once
/**
 * `lab down` (clusters/lab/lab.sh cmd_down) in a sandbox: the script is sourced with LAB_SH_FUNCTIONS=1 into
 * bash, its paths pointed at a temporary directory (LAB_CACHE, LAB_DAEMON_JSON, LAB_RUNC_WRAPPER), and the
 * commands it changes the host with are FAKES WRITTEN BY US on PATH: an `iptables` that keeps each table's rules
 * in a file and prints them as `iptables -S` does, an `ip` with a default route and bridges, a `docker` whose
 * daemon is up while the fake dockerd (a real `sleep` this test starts) lives, and a `kind`. Nothing on this
 * machine's firewall, links or docker is touched.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { LAB_DIR } from "./lab.ts";

const roots: string[] = [];
const sleepers: number[] = [];
afterAll(() => {
  for (const pid of sleepers)
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone already
    }
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});

const FAKE_IPTABLES = `#!/usr/bin/env bash
# fake iptables (and ip6tables): one file per command and table under $FAKE, lines as \`iptables -S\` prints them
me=$(basename "$0")
echo "$me $*" >>"$FAKE/calls"
t=filter
if [ "$1" = -t ]; then t=$2; shift 2; fi
f="$FAKE/$me.$t"; touch "$f"
op=$1; shift
join() { local out="" a; for a in "$@"; do case $a in *" "*) out+=" \\"$a\\"";; *) out+=" $a";; esac; done; echo "\${out# }"; }
case $op in
  -S) if [ $# -eq 0 ]; then cat "$f"; else grep -qx -- "-N $1" "$f" || { echo "iptables: No chain/target/match by that name." >&2; exit 1; }; grep -E -- "^-[NA] $1( |$)" "$f"; fi ;;
  -C) grep -qxF -- "-A $(join "$@")" "$f" || exit 1 ;;
  -I) grep -qx -- "-N $1" "$f" || grep -q -- "^-P $1 " "$f" || exit 1; echo "-A $(join "$@")" >>"$f" ;;
  -D) line="-A $(join "$@")"; n=$(grep -nxF -- "$line" "$f" | head -n 1 | cut -d: -f1); [ -n "$n" ] || { echo "iptables: Bad rule (does a matching rule exist in that chain?)." >&2; exit 1; }; sed -i "\${n}d" "$f" ;;
  -F) sed -i "/^-A $1 /d" "$f" ;;
  -P) sed -i "s/^-P $1 .*/-P $1 $2/" "$f" ;;
  -X) if grep -q -- "-j $1\\( \\|$\\)" "$f" || grep -q -- "^-A $1 " "$f"; then echo "iptables: Too many links." >&2; exit 1; fi; sed -i "/^-N $1$/d" "$f" ;;
  *) echo "fake iptables: $op" >&2; exit 2 ;;
esac
`;

const FAKE_IP = `#!/usr/bin/env bash
echo "ip $*" >>"$FAKE/calls"
case "$*" in
  "-o route show default") echo "default via 10.0.0.1 dev eth0 proto dhcp src 10.0.0.5 metric 100" ;;
  "-o link show type bridge") n=3; while read -r b; do echo "$n: $b: <BROADCAST,MULTICAST,UP> mtu 1500 qdisc noqueue state UP"; n=$((n+1)); done <"$FAKE/bridges" ;;
  "-o link show master "*) grep -qx "$5" "$FAKE/attached" 2>/dev/null && echo "9: veth0@if8: <BROADCAST> mtu 1500 master $5" || true ;;
  "link del "*) grep -vx "$3" "$FAKE/bridges" >"$FAKE/bridges.new" || true; mv "$FAKE/bridges.new" "$FAKE/bridges" ;;
  *) echo "fake ip: $*" >&2; exit 2 ;;
esac
`;

const FAKE_DOCKER = `#!/usr/bin/env bash
echo "docker $*" >>"$FAKE/calls"
# up while the fake dockerd runs: an exited one not yet reaped by init (a zombie) answers no more than dockerd would
up() {
  if [ -e "$FAKE/dockerd.pid" ]; then
    local st; st=$(cat "/proc/$(cat "$FAKE/dockerd.pid")/stat" 2>/dev/null) || return 1; st=\${st##*) }; [ "\${st%% *}" != Z ]
  else [ -e "$FAKE/docker-up" ]; fi
}
case "$1" in
  version) up || { echo "Cannot connect to the Docker daemon" >&2; exit 1; }; echo 20.10.24 ;;
  network)
    up || exit 1
    case "$2" in
      rm) rm -f "$FAKE/net-$3" ;;
      inspect) [ -e "$FAKE/net-$3" ] || exit 1; cat "$FAKE/net-$3" ;;
      # the network's name is the last word; its subnets are printed as inspect's template does
      create) shift 2; subnets=""; while [ $# -gt 1 ]; do [ "$1" = --subnet ] && subnets+="$2 "; shift; done; echo "$subnets" >"$FAKE/net-$1" ;;
    esac ;;
  info) up || exit 1; echo /var/lib/docker ;;
  *) echo "fake docker: $*" >&2; exit 2 ;;
esac
`;

/** A dockerd that does on the host what dockerd does at start: its chains, docker0; then it runs. */
const FAKE_DOCKERD = `#!/usr/bin/env bash
echo "dockerd $*" >>"$FAKE/calls"
echo $$ >"$2"; echo $$ >"$FAKE/dockerd.pid"
printf -- '-N DOCKER\n-N DOCKER-ISOLATION-STAGE-1\n-N DOCKER-USER\n-A FORWARD -j DOCKER-USER\n-A FORWARD -j DOCKER-ISOLATION-STAGE-1\n-A FORWARD -o docker0 -j DOCKER\n-A DOCKER-ISOLATION-STAGE-1 -j RETURN\n-A DOCKER-USER -j RETURN\n' >>"$FAKE/iptables.filter"
echo docker0 >>"$FAKE/bridges"
sed -i 's/^-P FORWARD .*/-P FORWARD DROP/' "$FAKE/iptables.filter"
exec sleep 300
`;

const FAKE_KIND = `#!/usr/bin/env bash
echo "kind $*" >>"$FAKE/calls"
case "$*" in
  "get clusters") cat "$FAKE/kind-clusters" 2>/dev/null || true ;;
  "delete cluster --name "*) grep -vx "$4" "$FAKE/kind-clusters" >"$FAKE/kc.new" || true; mv "$FAKE/kc.new" "$FAKE/kind-clusters" ;;
  *) exit 2 ;;
esac
`;

/** docker 20.10's rules in the host's tables for docker0 and the kind network's bridge, plus the lab's block. */
const DOCKER_FILTER = [
  "-P INPUT ACCEPT",
  "-P FORWARD DROP",
  "-P OUTPUT ACCEPT",
  "-N DOCKER",
  "-N DOCKER-ISOLATION-STAGE-1",
  "-N DOCKER-ISOLATION-STAGE-2",
  "-N DOCKER-USER",
  "-A INPUT -s 192.0.2.9/32 -j DROP",
  "-A FORWARD -j DOCKER-USER",
  "-A FORWARD -j DOCKER-ISOLATION-STAGE-1",
  "-A FORWARD -o br-0123456789ab -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT",
  "-A FORWARD -o br-0123456789ab -j DOCKER",
  "-A FORWARD -i br-0123456789ab ! -o br-0123456789ab -j ACCEPT",
  "-A FORWARD -o docker0 -j DOCKER",
  "-A FORWARD -i docker0 -o docker0 -j ACCEPT",
  "-A DOCKER-ISOLATION-STAGE-1 -i br-0123456789ab ! -o br-0123456789ab -j DOCKER-ISOLATION-STAGE-2",
  "-A DOCKER-ISOLATION-STAGE-1 -j RETURN",
  "-A DOCKER-ISOLATION-STAGE-2 -o br-0123456789ab -j DROP",
  "-A DOCKER-ISOLATION-STAGE-2 -j RETURN",
  "-A DOCKER-USER -o eth0 -j DROP",
  "-A DOCKER-USER -j RETURN",
];
const DOCKER_NAT = [
  "-P PREROUTING ACCEPT",
  "-P POSTROUTING ACCEPT",
  "-N DOCKER",
  "-A PREROUTING -m addrtype --dst-type LOCAL -j DOCKER",
  '-A OUTPUT ! -d 127.0.0.0/8 -m addrtype --dst-type LOCAL -m comment --comment "docker local" -j DOCKER',
  "-A DOCKER -i docker0 -j RETURN",
];

/**
 * Every command lab.sh's up and down use to change the host, faked. labSh refuses to run unless each of these
 * resolves to the sandbox's fake (a real dockerd started here would replace the host's /var/run/docker.sock).
 */
const FAKES: Record<string, string> = {
  iptables: FAKE_IPTABLES,
  ip6tables: FAKE_IPTABLES,
  ip: FAKE_IP,
  docker: FAKE_DOCKER,
  dockerd: FAKE_DOCKERD,
  kind: FAKE_KIND,
};

interface Sandbox {
  root: string;
  fake: string;
  cache: string;
  daemonJson: string;
  wrapper: string;
}

function sandbox(): Sandbox {
  const root = mkdtempSync(join(tmpdir(), "dpc-lab-down-"));
  roots.push(root);
  const fake = join(root, "fake");
  const bin = join(root, "bin");
  mkdirSync(fake);
  mkdirSync(bin);
  for (const [name, text] of Object.entries(FAKES)) {
    writeFileSync(join(bin, name), text);
    chmodSync(join(bin, name), 0o755);
  }
  writeFileSync(join(fake, "iptables.filter"), `${DOCKER_FILTER.join("\n")}\n`);
  writeFileSync(join(fake, "iptables.nat"), `${DOCKER_NAT.join("\n")}\n`);
  writeFileSync(join(fake, "ip6tables.filter"), "-P INPUT ACCEPT\n-P FORWARD ACCEPT\n-P OUTPUT ACCEPT\n");
  writeFileSync(join(fake, "bridges"), "docker0\nbr-0123456789ab\n");
  mkdirSync(join(root, "etc"));
  mkdirSync(join(root, "sbin"));
  return {
    root,
    fake,
    cache: join(root, "cache"),
    daemonJson: join(root, "etc", "daemon.json"),
    wrapper: join(root, "sbin", "runc-nosysres"),
  };
}

/** Runs a function of lab.sh in the sandbox; returns what it printed (lab.sh's `say` writes to stderr). */
function labSh(s: Sandbox, fn: string): { out: string; code: number } {
  const env = {
    ...process.env,
    PATH: `${join(s.root, "bin")}:${process.env.PATH}`,
    FAKE: s.fake,
    LAB_CACHE: s.cache,
    LAB_DAEMON_JSON: s.daemonJson,
    LAB_RUNC_WRAPPER: s.wrapper,
    LAB_SH_FUNCTIONS: "1",
  };
  try {
    const out = execFileSync(
      "bash",
      [
        "-c",
        `set -euo pipefail; source ${JSON.stringify(join(LAB_DIR, "lab.sh"))}
        for c in ${Object.keys(FAKES).join(" ")}; do
          p=$(command -v "$c" || true)
          [ "$p" = "${join(s.root, "bin")}/$c" ] || { echo "sandbox guard: $c resolves to \${p:-nothing}, not the fake: not running lab.sh"; exit 97; }
        done
        ${fn} 2>&1`,
      ],
      { env, encoding: "utf8" },
    );
    return { out: out.replace(/^\[lab \d\d:\d\d:\d\d\] /gm, ""), code: 0 };
  } catch (err) {
    const e = err as { stdout?: string; status?: number };
    if (e.status === 97) throw new Error(String(e.stdout));
    return { out: String(e.stdout ?? "").replace(/^\[lab \d\d:\d\d:\d\d\] /gm, ""), code: e.status ?? 1 };
  }
}

/**
 * A real process standing in for the dockerd `lab up` started (its pid in the lab's pid file). Started through a
 * shell that exits at once, so it is not this process' child: killed, it is reaped by init, as dockerd would be.
 * Until init reaps it (every ~2 s on this machine) it is a zombie, which lab.sh's `running` counts as stopped.
 */
function fakeDockerd(s: Sandbox): { pid: number; alive: () => boolean } {
  const pid = Number(
    execFileSync("bash", ["-c", "sleep 300 >/dev/null 2>&1 & echo $!"], { encoding: "utf8" }).trim(),
  );
  sleepers.push(pid);
  mkdirSync(s.cache, { recursive: true });
  writeFileSync(join(s.cache, "dockerd.pid"), String(pid));
  writeFileSync(join(s.fake, "dockerd.pid"), String(pid));
  return {
    pid,
    // a zombie (exited, not yet reaped by init) is not alive
    alive: () => {
      try {
        return !/^\S+ \(.*\) Z /.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
      } catch {
        return false;
      }
    },
  };
}

/** What `lab up` leaves: its daemon.json (marked by hash), the runc wrapper, the egress device. */
function labWasUp(s: Sandbox) {
  const json = labSh(s, "lab_daemon_json").out;
  writeFileSync(s.daemonJson, json);
  mkdirSync(join(s.cache, "state"), { recursive: true });
  writeFileSync(
    join(s.cache, "state", "daemon.json.sha256"),
    `${execFileSync("sha256sum", [s.daemonJson], { encoding: "utf8" }).split(" ")[0]}\n`,
  );
  writeFileSync(s.wrapper, readFileSync(join(LAB_DIR, "files", "runc-nosysres")));
  writeFileSync(join(s.cache, "state", "egress-dev"), "eth0\n");
}

const bashOk =
  existsSync("/bin/bash") &&
  (() => {
    try {
      execFileSync("bash", ["-n", join(LAB_DIR, "lab.sh")]);
      execFileSync("jq", ["--version"]);
      return true;
    } catch {
      return false;
    }
  })();

// each test runs lab.sh in a bash sandbox: 3-4.5 s alone on the 2-core development machine under load, past
// vitest's 5 s default beside the other worker's tests
describe.skipIf(!bashOk)(
  "lab down undoes what lab up added (sandbox, fake host commands)",
  { timeout: 30_000 },
  () => {
    it("lab.sh parses (bash -n)", () => {
      execFileSync("bash", ["-n", join(LAB_DIR, "lab.sh")]);
    });

    it("running PID: a process that runs, not one that exited and waits to be reaped (a zombie), nor no process", async () => {
      const s = sandbox();
      // `sleep 300` that a shell became after starting `sleep 0.5`: the shell would have reaped a child that ended
      // before its exec, `sleep 300` never reaps the one that ends after it
      const parent = Number(
        execFileSync("bash", ["-c", "bash -c 'sleep 0.5 & exec sleep 300' >/dev/null 2>&1 & echo $!"], {
          encoding: "utf8",
        }).trim(),
      );
      sleepers.push(parent);
      // polled: the child ends half a second after it starts (ps exits 1 while the parent has no child)
      let zombie = "";
      for (const until = Date.now() + 10_000; zombie === "" && Date.now() < until; ) {
        zombie =
          (spawnSync("ps", ["-o", "pid=,stat=", "--ppid", String(parent)], { encoding: "utf8" }).stdout ?? "")
            .split("\n")
            .filter((l) => / Z/.test(l))
            .map((l) => l.trim().split(/\s+/)[0] as string)[0] ?? "";
        if (zombie === "") await new Promise((r) => setTimeout(r, 20));
      }
      expect(zombie, "the zombie child").not.toBe("");
      const r = labSh(
        s,
        `for p in ${parent} ${zombie} 999999999; do if running "$p"; then echo "$p runs"; else echo "$p no"; fi; done`,
      );
      expect(r.out.trim().split("\n")).toEqual([`${parent} runs`, `${zombie} no`, "999999999 no"]);
    });

    it("the lab's own dockerd: clusters deleted, dockerd stopped, the egress block, docker's chains and bridges, daemon.json and the wrapper removed — each said", () => {
      const s = sandbox();
      labWasUp(s);
      const dockerd = fakeDockerd(s);
      writeFileSync(join(s.fake, "kind-clusters"), "cdc-kpr\n");
      mkdirSync(join(s.cache, "state"), { recursive: true });
      writeFileSync(join(s.cache, "state", "kind-network"), "created by lab up\n");
      const r = labSh(s, "cmd_down");
      expect(r.code).toBe(0);
      const lines = r.out.split("\n");
      expect(lines).toContain("removed: kind cluster cdc-kpr");
      expect(lines).toContain(
        `kept: docker network kind: it is in the lab's data root (${join(s.cache, "docker")}), unused while that docker is stopped; the next up reuses it`,
      );
      expect(lines.some((l) => /^removed: dockerd \(pid \d+\)$/.test(l))).toBe(true);
      expect(lines).toContain(
        "removed: iptables rule DOCKER-USER -o eth0 -j DROP (containers' egress block)",
      );
      for (const c of ["DOCKER", "DOCKER-ISOLATION-STAGE-1", "DOCKER-ISOLATION-STAGE-2", "DOCKER-USER"])
        expect(lines).toContain(`removed: iptables chain ${c} (filter table)`);
      expect(lines).toContain("removed: iptables chain DOCKER (nat table)");
      expect(lines).toContain(
        "removed: 7 rule(s) of the filter table's built-in chains that led to docker's chains or bridges",
      );
      expect(lines).toContain(
        "removed: 2 rule(s) of the nat table's built-in chains that led to docker's chains or bridges",
      );
      expect(lines).toContain("removed: bridge docker0");
      expect(lines).toContain("removed: bridge br-0123456789ab");
      expect(lines).toContain(`removed: ${s.daemonJson} (written by lab up)`);
      expect(lines).toContain(`removed: ${s.wrapper} (installed by lab up)`);
      // the host's own rule stays; nothing of docker's is left
      expect(readFileSync(join(s.fake, "iptables.filter"), "utf8")).toBe(
        "-P INPUT ACCEPT\n-P FORWARD DROP\n-P OUTPUT ACCEPT\n-A INPUT -s 192.0.2.9/32 -j DROP\n",
      );
      expect(readFileSync(join(s.fake, "iptables.nat"), "utf8")).toBe(
        "-P PREROUTING ACCEPT\n-P POSTROUTING ACCEPT\n",
      );
      expect(readFileSync(join(s.fake, "bridges"), "utf8")).toBe("");
      expect(existsSync(s.daemonJson)).toBe(false);
      expect(existsSync(s.wrapper)).toBe(false);
      expect(dockerd.alive()).toBe(false);
      // an up that did not record the FORWARD policy: down keeps docker's DROP, saying why
      expect(lines).toContain(
        "kept: the filter table's FORWARD policy DROP: dockerd sets it when it starts, and lab up did not record what it was before (an up from an older lab.sh), so down does not guess",
      );
      // a second down finds nothing to remove and says nothing was removed
      const again = labSh(s, "cmd_down");
      expect(again.code).toBe(0);
      expect(again.out).not.toContain("removed:");
    });

    it("a docker that was running before lab up: only the egress block (and the kind network lab up made) go; the rest is kept, saying why", () => {
      const s = sandbox();
      writeFileSync(join(s.fake, "docker-up"), "");
      mkdirSync(join(s.cache, "state"), { recursive: true });
      writeFileSync(join(s.cache, "state", "egress-dev"), "eth0\n");
      writeFileSync(join(s.cache, "state", "kind-network"), "created by lab up\n");
      writeFileSync(s.daemonJson, '{"log-driver": "journald"}\n');
      writeFileSync(s.wrapper, readFileSync(join(LAB_DIR, "files", "runc-nosysres")));
      const r = labSh(s, "cmd_down");
      expect(r.code).toBe(0);
      const lines = r.out.split("\n");
      expect(lines).toContain("removed: docker network kind");
      expect(lines).toContain(
        "kept: dockerd: lab up did not start it (it was running already), so down leaves it running",
      );
      expect(lines).toContain(
        "removed: iptables rule DOCKER-USER -o eth0 -j DROP (containers' egress block)",
      );
      expect(lines).toContain(
        "kept: docker's iptables chains and bridges: the docker daemon running here (not started by lab up) keeps using them",
      );
      expect(lines).toContain(
        `kept: ${s.daemonJson}: not the one lab up wrote (changed since, or someone else's)`,
      );
      expect(lines).toContain(`removed: ${s.wrapper} (installed by lab up)`);
      expect(readFileSync(join(s.fake, "iptables.filter"), "utf8")).not.toContain("-o eth0 -j DROP");
      expect(readFileSync(join(s.fake, "iptables.filter"), "utf8")).toContain("-N DOCKER-USER");
      expect(readFileSync(s.daemonJson, "utf8")).toBe('{"log-driver": "journald"}\n');
    });

    it("docker stopped and not the lab's: the emptied DOCKER-USER chain goes, docker's others stay; your daemon.json from before is put back", () => {
      const s = sandbox();
      labWasUp(s);
      writeFileSync(join(s.cache, "state", "daemon.json.before"), '{"mine": true}\n');
      const r = labSh(s, "cmd_down");
      expect(r.code).toBe(0);
      const lines = r.out.split("\n");
      expect(lines).toContain("removed: iptables chain DOCKER-USER (empty, and docker is stopped)");
      expect(lines).toContain(
        "kept: docker's iptables chains and bridges: lab up did not start the docker that made them; it makes them again when it starts",
      );
      expect(lines).toContain(`removed: the lab's ${s.daemonJson} (yours from before lab up is back)`);
      expect(readFileSync(s.daemonJson, "utf8")).toBe('{"mine": true}\n');
      const filter = readFileSync(join(s.fake, "iptables.filter"), "utf8");
      expect(filter).not.toMatch(/DOCKER-USER/);
      expect(filter).toContain("-N DOCKER-ISOLATION-STAGE-1");
    });

    it("up then down: the host is as it was (your daemon.json back, iptables and bridges as before, no wrapper)", () => {
      const s = sandbox();
      // a host with a daemon.json of its own, no docker running, a firewall rule of its own, no bridges
      writeFileSync(s.daemonJson, '{"mine": true}\n');
      writeFileSync(
        join(s.fake, "iptables.filter"),
        "-P INPUT ACCEPT\n-P FORWARD ACCEPT\n-A INPUT -s 192.0.2.9/32 -j DROP\n",
      );
      writeFileSync(join(s.fake, "iptables.nat"), "");
      writeFileSync(join(s.fake, "bridges"), "");
      const before = {
        filter: readFileSync(join(s.fake, "iptables.filter"), "utf8"),
        json: readFileSync(s.daemonJson, "utf8"),
      };
      const up = labSh(s, "cmd_up");
      expect(up.code).toBe(0);
      expect(up.out).toContain(
        `kept your ${s.daemonJson} aside in ${join(s.cache, "state", "daemon.json.before")} (down puts it back)`,
      );
      expect(JSON.parse(readFileSync(s.daemonJson, "utf8"))).toMatchObject({
        "default-runtime": "runc-nosysres",
        bip: "172.31.250.1/24",
      });
      expect(readFileSync(join(s.fake, "iptables.filter"), "utf8")).toContain(
        "-A DOCKER-USER -o eth0 -j DROP",
      );
      // IPv6: the dual-stack network with our two ranges, and its egress blocked in FORWARD
      expect(up.out).toContain(
        "kind-dual network (the dual-stack profile's): 172.31.101.0/24 fd00:ca1d:101::/64",
      );
      expect(readFileSync(join(s.fake, "ip6tables.filter"), "utf8")).toContain("-A FORWARD -o eth0 -j DROP");
      expect(existsSync(s.wrapper)).toBe(true);
      const down = labSh(s, "cmd_down");
      expect(down.out).toContain(
        "removed: ip6tables rule FORWARD -o eth0 -j DROP (containers' IPv6 egress block)",
      );
      expect(readFileSync(join(s.fake, "ip6tables.filter"), "utf8")).not.toContain("DROP");
      expect(down.code).toBe(0);
      expect(down.out).toContain(`removed: the lab's ${s.daemonJson} (yours from before lab up is back)`);
      // dockerd set FORWARD to DROP; down puts back the ACCEPT that was there
      expect(down.out).toContain(
        "removed: the filter table's FORWARD policy DROP that dockerd set (back to ACCEPT, as before lab up)",
      );
      expect(readFileSync(join(s.fake, "iptables.filter"), "utf8")).toBe(before.filter);
      expect(readFileSync(s.daemonJson, "utf8")).toBe(before.json);
      expect(readFileSync(join(s.fake, "bridges"), "utf8")).toBe("");
      expect(existsSync(s.wrapper)).toBe(false);
    });

    it("a bridge something still uses is kept, named", () => {
      const s = sandbox();
      labWasUp(s);
      fakeDockerd(s);
      writeFileSync(join(s.fake, "attached"), "br-0123456789ab\n");
      const lines = labSh(s, "cmd_down").out.split("\n");
      expect(lines).toContain("kept: bridge br-0123456789ab: something is still attached to it");
      expect(lines).toContain("removed: bridge docker0");
    });
  },
);

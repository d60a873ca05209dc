// A stand-in for Cilium's per-endpoint program, written by us for the kernel lab: same name as Cilium's
// `cil_from_container`, counts packets and lets them pass (TC_ACT_OK = TCX_PASS = 0).
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, __u64);
} dpc_packets SEC(".maps");

SEC("tc")
int cil_from_container(struct __sk_buff *skb) {
  __u32 key = 0;
  __u64 *n = bpf_map_lookup_elem(&dpc_packets, &key);
  if (n) __sync_fetch_and_add(n, 1);
  return 0;
}

char LICENSE[] SEC("license") = "GPL";

// Written by us for the kernel lab: loads cil_from_container from an object file and attaches it to a
// device of a named network namespace as a tcx ingress link (BPF_LINK_CREATE with BPF_TCX_INGRESS), then
// pins the link so the attachment outlives this process. Debian 12's bpftool 7.1 cannot do this.
// usage: tcx_attach OBJ NETNS DEV PIN
#define _GNU_SOURCE
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>

#define DPC_BPF_TCX_INGRESS 46 /* linux-libc-dev 6.1 predates the enum */

int main(int argc, char **argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: %s OBJ NETNS DEV PIN\n", argv[0]);
    return 2;
  }
  struct bpf_object *obj = bpf_object__open_file(argv[1], NULL);
  if (!obj || bpf_object__load(obj)) {
    fprintf(stderr, "load %s: %s\n", argv[1], strerror(errno));
    return 1;
  }
  struct bpf_program *prog = bpf_object__find_program_by_name(obj, "cil_from_container");
  if (!prog) {
    fprintf(stderr, "no program cil_from_container in %s\n", argv[1]);
    return 1;
  }
  char path[512];
  snprintf(path, sizeof path, "/var/run/netns/%s", argv[2]);
  int ns = open(path, O_RDONLY);
  if (ns < 0 || setns(ns, CLONE_NEWNET)) {
    fprintf(stderr, "setns %s: %s\n", path, strerror(errno));
    return 1;
  }
  unsigned ifindex = if_nametoindex(argv[3]);
  if (!ifindex) {
    fprintf(stderr, "no device %s in %s\n", argv[3], argv[2]);
    return 1;
  }
  int link = bpf_link_create(bpf_program__fd(prog), ifindex, DPC_BPF_TCX_INGRESS, NULL);
  if (link < 0) {
    fprintf(stderr, "bpf_link_create tcx_ingress: %s\n", strerror(-link));
    return 1;
  }
  if (bpf_obj_pin(link, argv[4])) {
    fprintf(stderr, "pin %s: %s\n", argv[4], strerror(errno));
    return 1;
  }
  printf("ifindex=%u link_fd=%d\n", ifindex, link);
  return 0;
}

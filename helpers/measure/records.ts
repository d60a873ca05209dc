/** What the measurements record (the measure-scale and measure-latency topics build them; `summary` and the report's charts draw them): the shapes the measurement machinery reads, the records themselves declared by their topics. */

/** Ours: rule and map growth with the number of Services (4 endpoints each, EndpointSlices without Pods). */
export interface MeasureScaleRecord {
  endpoints_per_service: number;
  points: {
    services: number;
    endpoints: number;
    /** iptables-save lines naming the measurement Services (KUBE-SERVICES, KUBE-SVC-*, KUBE-SEP-* rules). */
    kube_proxy_lines: number;
    /** bpf lb list rows of the measurement frontends, per node. */
    lb_entries: Record<string, number>;
    /** Time from apply to programmed everywhere (ms, the run's clock). */
    programmed_ms: number;
    /** The bulk create's own time (ms): the API accepting every Service and EndpointSlice. */
    apply_ms?: number;
    /**
     * From the create's end (the API holds every object) to the last read that found them programmed: every
     * agent's service list and, with kube-proxy, its DNAT rules (ms, recorded times).
     */
    converged_ms?: number;
    /** The bulk delete's own time (ms). */
    delete_ms?: number;
    /** From the delete's end to the last read that found them gone from every agent's service list (ms). */
    gone_ms?: number;
  }[];
  /**
   * What the cluster took, as the suite measured it: the points' converged_ms + gone_ms (ms). Recorded with the
   * suite's own time below, so `npm run bench` reports the ratio (issue 20: within 1.5×).
   */
  convergence_ms?: number;
  /** The observation's own time: from its first call's start to its last call's end (ms, recorded times). */
  suite_ms?: number;
  /** Least-squares slope and fit of kube-proxy lines against the number of Services. */
  kube_proxy_per_service: number;
  kube_proxy_r2: number;
  /** The same for the BPF LB entries (first node). */
  lb_per_service: number;
  lb_r2: number;
}

/** Ours: convergence and fail-fast latencies over repeated events. */
export interface MeasureLatencyRecord {
  events: {
    index: number;
    address: string;
    map_ms: Record<string, number | null>;
    kube_proxy_ms: number | null;
  }[];
  map_p50_ms: number | null;
  map_p90_ms: number | null;
  kube_proxy_p50_ms: number | null;
  kube_proxy_p90_ms: number | null;
  ghost_seconds: number[];
  ghost_p50_s: number | null;
  ghost_p90_s: number | null;
  ghost_exit_codes: number[];
  /** ServiceNoBackendResponse of the agent during the probes: `reject` (default) or `drop` (opt-in profile). */
  no_backend_response: string | null;
}

/** What a bundle measured, as `summary` and the report's charts draw it (each from its topic's record). */
export interface Measurements {
  scaling?: MeasureScaleRecord;
  latency?: MeasureLatencyRecord;
}

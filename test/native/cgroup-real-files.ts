/**
 * Real cgroupfs file contents for the differential tests (issue 30): what the kernel prints,
 * every line of it, not the short files of the recorded tree. V1_MEMORY_STAT: a container's
 * v1 memory.stat recorded on this project's 6.18 hybrid hosts (42 lines, local then total_
 * keys); V2_MEMORY_STAT: a v2 memory.stat with every key a 6.x kernel prints, in its order
 * (mm/memcontrol.c memory_stats[] then the vm events), with container-sized values; keys like
 * file_mapped, anon_thp and workingset_refault_file must not be taken for file / anon.
 */
export const V1_MEMORY_STAT = `cache 2482176
rss 21401600
rss_huge 0
shmem 0
mapped_file 106496
dirty 8192
writeback 0
workingset_refault_anon 0
workingset_refault_file 8975
swap 0
swapcached 0
pgpgin 11922416
pgpgout 11916585
pgfault 18987956
pgmajfault 311
inactive_anon 19980288
active_anon 1421312
inactive_file 90112
active_file 2392064
unevictable 0
hierarchical_memory_limit 25276514304
hierarchical_memsw_limit 9223372036854771712
total_cache 2486272
total_rss 21405696
total_rss_huge 0
total_shmem 0
total_mapped_file 106496
total_dirty 8192
total_writeback 0
total_workingset_refault_anon 0
total_workingset_refault_file 8975
total_swap 0
total_swapcached 0
total_pgpgin 11922420
total_pgpgout 11916589
total_pgfault 18987999
total_pgmajfault 312
total_inactive_anon 19984384
total_active_anon 1421312
total_inactive_file 94208
total_active_file 2392064
total_unevictable 0
`;

export const V1_EXPECTED = {
  memInactiveFile: 94208n,
  memRss: 21405696n,
  memCache: 2486272n,
  memPgfault: 18987999n,
  memPgmajfault: 312n,
};

const V2_KEYS: Array<[string, string]> = [
  ['anon', '21405696'],
  ['file', '2486272'],
  ['kernel', '1310720'],
  ['kernel_stack', '131072'],
  ['pagetables', '311296'],
  ['sec_pagetables', '0'],
  ['percpu', '720'],
  ['sock', '0'],
  ['vmalloc', '0'],
  ['shmem', '0'],
  ['zswap', '0'],
  ['zswapped', '0'],
  ['file_mapped', '106496'],
  ['file_dirty', '8192'],
  ['file_writeback', '0'],
  ['swapcached', '0'],
  ['anon_thp', '0'],
  ['file_thp', '0'],
  ['shmem_thp', '0'],
  ['inactive_anon', '19984384'],
  ['active_anon', '1421312'],
  ['inactive_file', '94208'],
  ['active_file', '2392064'],
  ['unevictable', '0'],
  ['slab_reclaimable', '412216'],
  ['slab_unreclaimable', '399568'],
  ['slab', '811784'],
  ['workingset_refault_anon', '0'],
  ['workingset_refault_file', '8975'],
  ['workingset_activate_anon', '0'],
  ['workingset_activate_file', '12'],
  ['workingset_restore_anon', '0'],
  ['workingset_restore_file', '0'],
  ['workingset_nodereclaim', '0'],
  ['pgdemote_kswapd', '0'],
  ['pgdemote_direct', '0'],
  ['pgdemote_khugepaged', '0'],
  ['pgdemote_proactive', '0'],
  ['pgpromote_success', '0'],
  ['pgscan', '0'],
  ['pgsteal', '0'],
  ['pgscan_kswapd', '0'],
  ['pgscan_direct', '0'],
  ['pgscan_khugepaged', '0'],
  ['pgscan_proactive', '0'],
  ['pgsteal_kswapd', '0'],
  ['pgsteal_direct', '0'],
  ['pgsteal_khugepaged', '0'],
  ['pgsteal_proactive', '0'],
  ['pgfault', '18987999'],
  ['pgmajfault', '312'],
  ['pgrefill', '0'],
  ['pgactivate', '3'],
  ['pgdeactivate', '0'],
  ['pglazyfree', '0'],
  ['pglazyfreed', '0'],
  ['swpin_zero', '0'],
  ['swpout_zero', '0'],
  ['zswpin', '0'],
  ['zswpout', '0'],
  ['zswpwb', '0'],
  ['thp_fault_alloc', '0'],
  ['thp_collapse_alloc', '0'],
  ['thp_swpout', '0'],
  ['thp_swpout_fallback', '0'],
];
export const V2_MEMORY_STAT = V2_KEYS.map(([k, v]) => `${k} ${v}\n`).join('');

/** The same values as V1_EXPECTED: v2 names them anon / file / inactive_file / pgfault. */
export const V2_EXPECTED = V1_EXPECTED;

/** A v1 cpuacct.usage_all and cpu.stat, v2 cpu.stat and memory.events as the kernel prints them. */
export const V1_CPU_STAT = 'nr_periods 1207\nnr_throttled 31\nthrottled_time 4005123456\nnr_bursts 0\nburst_time 0\n';
export const V2_CPU_STAT =
  'usage_usec 91827364\nuser_usec 61827364\nsystem_usec 30000000\ncore_sched.force_idle_usec 0\n' +
  'nr_periods 1207\nnr_throttled 31\nthrottled_usec 4005123\nnr_bursts 0\nburst_usec 0\n';
export const V2_MEMORY_EVENTS = 'low 0\nhigh 0\nmax 17\noom 3\noom_kill 2\noom_group_kill 0\n';
export const V1_OOM_CONTROL = 'oom_kill_disable 0\nunder_oom 0\noom_kill 2\n';

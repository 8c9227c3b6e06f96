/** upstream cgroupDriver values; containerd's runc SystemdCgroup option must agree (true for systemd). */
export const CGROUP_DRIVERS = ['cgroupfs', 'systemd'] as const;
export type CgroupDriver = (typeof CGROUP_DRIVERS)[number];

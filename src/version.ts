/** The agent's version: the one place it is written (node status, User-Agent, --version, BirthCry). */
export const VERSION = 'v0.1.0-kubelet-ts';

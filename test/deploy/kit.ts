/**
 * The monitoring kit in deploy/ as tests read it: the dashboard's queries (with Grafana's
 * variables filled in), the metric names a PromQL text selects, and the scrape config made
 * concrete for one agent (targets, certificate files, rule file path, scrape interval).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { REPO_ROOT } from '../support/kubelet-process.js';

export const DEPLOY = join(REPO_ROOT, 'deploy');
export const SCRAPE_CONFIG = join(DEPLOY, 'prometheus', 'prometheus.yml');
export const ALERT_RULES = join(DEPLOY, 'prometheus', 'kubelet-ts-alerts.yml');
export const ALERT_TESTS = join(DEPLOY, 'prometheus', 'kubelet-ts-alerts.test.yml');
export const DASHBOARD = join(DEPLOY, 'grafana', 'kubelet-ts-dashboard.json');

/**
 * Names the kit queries that an agent may not export: none since the certificate manager's TTL
 * gauges exist on every agent (+Inf until a certificate is in use, as upstream).
 */
export const CERTIFICATE_MANAGER_NAMES: string[] = [];

interface Panel {
  title: string;
  type: string;
  targets?: Array<{ expr: string }>;
  panels?: Panel[];
}

/** Every query of the dashboard with its panel title; `$instance` → all, `$__rate_interval` → rateWindow. */
export function dashboardQueries(rateWindow = '1m'): Array<{ panel: string; expr: string }> {
  const dash = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as { panels: Panel[] };
  const panels = dash.panels.flatMap((p) => [p, ...(p.panels ?? [])]);
  return panels.flatMap((p) =>
    (p.targets ?? []).map((t) => ({
      panel: p.title,
      expr: t.expr.replaceAll('$instance', '.*').replaceAll('$__rate_interval', rateWindow),
    })),
  );
}

/** The metric names a PromQL text selects (every name written before a `{` label matcher). */
export function selectedMetricNames(promql: string): string[] {
  return [...promql.matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)\{/g)]
    .map((m) => m[1]!)
    .filter((n) => !['by', 'without', 'on', 'ignoring'].includes(n));
}

/** The alert rules' expressions. */
export function alertExpressions(): string[] {
  const rules = parse(readFileSync(ALERT_RULES, 'utf8')) as { groups: Array<{ rules: Array<{ expr: string }> }> };
  return rules.groups.flatMap((g) => g.rules.map((r) => r.expr));
}

/** deploy/prometheus/prometheus.yml pointed at one agent: its address, CA, client pair; a fast interval. */
export function concreteScrapeConfig(o: {
  target: string;
  caFile: string;
  certFile: string;
  keyFile: string;
  intervalS: number;
}): string {
  const cfg = parse(readFileSync(SCRAPE_CONFIG, 'utf8')) as {
    global: Record<string, string>;
    rule_files: string[];
    scrape_configs: Array<{ tls_config: Record<string, string>; static_configs: Array<{ targets: string[] }> }>;
  };
  cfg.global.scrape_interval = `${o.intervalS}s`;
  cfg.global.evaluation_interval = `${o.intervalS}s`;
  cfg.rule_files = [ALERT_RULES];
  // Each job gets its own copies: the file shares them through YAML anchors.
  cfg.scrape_configs = cfg.scrape_configs.map((j) => ({
    ...j,
    tls_config: {
      ...j.tls_config,
      ca_file: o.caFile,
      cert_file: o.certFile,
      key_file: o.keyFile,
      server_name: 'localhost',
    },
    static_configs: [{ targets: [o.target] }],
  }));
  return stringify(cfg, { aliasDuplicateObjects: false });
}

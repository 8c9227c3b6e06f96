/**
 * YAML parsing that loads the `yaml` package only when a YAML text is actually parsed. JSON (a
 * subset of YAML, and what most generated kubeconfigs and manifests are) goes through JSON.parse
 * and never loads it: the package is a few MiB of resident code and heap an agent that reads no
 * YAML should not carry. `require` keeps the parse synchronous for callers.
 */
import { createRequire } from 'node:module';
import type * as Yaml from 'yaml';

type YamlModule = typeof Yaml;

let yaml: YamlModule | undefined;

/** The `yaml` package, loaded on first use. */
export function yamlModule(): YamlModule {
  yaml ??= createRequire(import.meta.url)('yaml') as YamlModule;
  return yaml;
}

/** One document: JSON when it parses as JSON, else YAML (`yaml`'s parse, its errors unchanged). */
export function parseYamlDocument(text: string): unknown {
  if (/^\s*[{[]/.test(text)) {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      // YAML flow style also starts with { or [: let the YAML parser decide.
    }
  }
  return yamlModule().parse(text) as unknown;
}

/**
 * httpGet probe (upstream pkg/probe/http) over the client lifecycle hooks use (util/http-get):
 * 200–399 is success; a redirect to another host is not followed and counts as success with a
 * warning (upstream "Probe terminated redirects"); transport errors and timeouts are failures.
 */
import type { Container } from '../api/types.js';
import { httpGet, newRequestForHTTPGetAction, type HttpGetAction } from '../util/http-get.js';
import { errorMessage } from '../errors.js';
import type { Prober, ProbeReply, ProbeTarget } from './types.js';

export function httpProber(action: HttpGetAction, container: Container): Prober {
  return {
    async probe(t: ProbeTarget, timeoutMs: number): Promise<ProbeReply> {
      let req;
      try {
        req = newRequestForHTTPGetAction(action, container, t.podIP, 'probe');
      } catch (err) {
        return { outcome: 'unknown', output: errorMessage(err) };
      }
      try {
        const res = await httpGet(req, { timeoutMs });
        const body = res.body.toString('utf8');
        if (res.statusCode >= 200 && res.statusCode < 400) {
          if (res.nonLocalRedirect)
            return { outcome: 'warning', output: `Probe terminated redirects, Response body: ${body}` };
          return { outcome: 'success', output: body };
        }
        return { outcome: 'failure', output: `HTTP probe failed with statuscode: ${res.statusCode}` };
      } catch (err) {
        return { outcome: 'failure', output: errorMessage(err) };
      }
    },
  };
}

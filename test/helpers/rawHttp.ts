// One HTTP request exactly as given, below fetch: header lines as listed (a name given twice is
// sent twice, where fetch joins them) and body bytes as they are (fetch re-encodes a string).
import http from 'node:http';

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** the body parsed as JSON, else its text */
  body: any;
}

export function rawRequest(
  baseUrl: string,
  method: string,
  pathAndQuery: string,
  headers: Record<string, string | string[]>,
  body?: string | Buffer,
): Promise<RawResponse> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: url.hostname, port: url.port, method, path: pathAndQuery, headers, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            // not JSON: the text
          }
          resolve({ status: res.statusCode!, headers: res.headers, body: parsed });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

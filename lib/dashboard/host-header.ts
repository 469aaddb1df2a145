import { isIPv4, isIPv6 } from 'node:net';

/** A `Host` header, or a host the options name, read strictly. */
export interface HostAndPort {
  /** A lower-case name, an IPv4 address, or an IPv6 address in brackets as URLs write it (`[::1]`). */
  readonly hostname: string;
  /** The port written after the host; absent in a host the options name, it stands for any port. */
  readonly port: number | undefined;
}

/** `name`, `IPv4` or `[IPv6]`, then `:port`; no userinfo, path, zone or trailing dot. */
const HOST = /^(?:\[([0-9a-f:.]+)\]|([a-z0-9_.-]+))(?::([1-9][0-9]{0,4}))?$/i;
const LABEL = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/;

/** `text` as a host and port, or `undefined` when it is anything else (`evil.example@127.0.0.1` included). */
export function parseHost(text: string): HostAndPort | undefined {
  const [, ipv6, name, portText] = HOST.exec(text) ?? [];
  const port = portText === undefined ? undefined : Number(portText);
  if (port !== undefined && port > 65_535) return undefined;
  if (ipv6 !== undefined) return isIPv6(ipv6) ? { hostname: new URL(`http://[${ipv6}]`).hostname, port } : undefined;
  const hostname = name?.toLowerCase();
  if (hostname === undefined || hostname.length > 253) return undefined;
  return hostname.split('.').every((label) => LABEL.test(label)) ? { hostname, port } : undefined;
}

/** `localhost`, a name under `.localhost`, 127.0.0.0/8 or `[::1]`. */
export function isLoopback({ hostname }: HostAndPort): boolean {
  if (hostname === 'localhost' || hostname.endsWith('.localhost') || hostname === '[::1]') return true;
  return isIPv4(hostname) && hostname.startsWith('127.');
}

/** Whether `host` is one of `hosts`: the same name, and the same port where one is given. */
export function isListedHost(host: HostAndPort, hosts: readonly HostAndPort[]): boolean {
  return hosts.some((listed) => listed.hostname === host.hostname && (listed.port ?? host.port) === host.port);
}

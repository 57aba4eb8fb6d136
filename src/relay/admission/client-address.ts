/**
 * @module relay/admission/client-address
 * Whose connection this is, for the per-address limits (docs/operations.md "Edge limits"). Directly
 * exposed (`--trusted-proxy-depth 0`, the default) it is the TCP peer and `X-Forwarded-For` is
 * ignored: any client can write that header. Behind N trusted proxies, each appending the address
 * it saw, the client is the Nth entry from the right; entries further left were written by the
 * client itself and are never trusted.
 */
export function clientAddress(
  peer: string | undefined,
  forwardedFor: string | string[] | undefined,
  trustedProxyDepth: number,
): string {
  const direct = normalise(peer ?? 'unknown');
  if (trustedProxyDepth === 0 || forwardedFor === undefined) return direct;
  const hops = (Array.isArray(forwardedFor) ? forwardedFor.join(',') : forwardedFor)
    .split(',')
    .map((hop) => hop.trim())
    .filter((hop) => hop.length > 0);
  // Fewer hops than proxies: the leftmost is the furthest one any trusted proxy saw.
  const hop = hops[Math.max(0, hops.length - trustedProxyDepth)];
  return hop === undefined ? direct : normalise(hop);
}

/** `::ffff:1.2.3.4` (IPv4 on a dual-stack socket) and `1.2.3.4` are one client. */
function normalise(address: string): string {
  return address.startsWith('::ffff:') ? address.slice('::ffff:'.length) : address.toLowerCase();
}

/**
 * The group an address is limited as (docs/operations.md "Edge limits"): an IPv4 address (or any
 * other label) is its own group; an IPv6 address is its first `ipv6PrefixLength` bits, because one
 * subscriber is handed a whole /64 (or more) and can pick any address in it.
 */
export function addressGroup(address: string, ipv6PrefixLength: number): string {
  const groups = ipv6Groups(address);
  if (groups === undefined || ipv6PrefixLength >= 128) return address;
  const kept: string[] = [];
  for (let bit = 0, index = 0; bit < ipv6PrefixLength; bit += 16, index += 1) {
    const bits = Math.min(16, ipv6PrefixLength - bit);
    const mask = bits === 16 ? 0xffff : (0xffff << (16 - bits)) & 0xffff;
    kept.push((groups[index]! & mask).toString(16));
  }
  return `${kept.join(':')}::/${ipv6PrefixLength}`;
}

/** The eight 16-bit groups of an IPv6 address (zone dropped, embedded IPv4 read), or undefined. */
function ipv6Groups(address: string): number[] | undefined {
  if (!address.includes(':')) return undefined;
  let text = address.split('%')[0]!;
  const lastColon = text.lastIndexOf(':');
  const tail = text.slice(lastColon + 1);
  if (tail.includes('.')) {
    const octets = tail.split('.').map(Number);
    if (octets.length !== 4 || octets.some((octet) => !Number.isInteger(octet) || octet < 0 || octet > 255))
      return undefined;
    const [a, b, c, d] = octets as [number, number, number, number];
    text = `${text.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const parse = (part: string | undefined): number[] | undefined => {
    if (part === undefined || part === '') return [];
    const values = part
      .split(':')
      .map((group) => (/^[0-9a-f]{1,4}$/i.test(group) ? Number.parseInt(group, 16) : NaN));
    return values.some(Number.isNaN) ? undefined : values;
  };
  const head = parse(halves[0]);
  const rest = parse(halves[1]);
  if (head === undefined || rest === undefined) return undefined;
  const missing = 8 - head.length - rest.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  return [...head, ...Array<number>(halves.length === 1 ? 0 : missing).fill(0), ...rest];
}

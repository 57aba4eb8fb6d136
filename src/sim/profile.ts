/**
 * @module sim/profile
 * The simulator's answers where the upstream interface leaves the choice open (docs/upstream.md
 * "Open choices and simulator profiles"). A profile fixes every such choice at once; the relay's
 * end-to-end tests run against each profile, so the relay cannot come to depend on one of them.
 * `default` is the simulator's historical behaviour; `terse` differs from it in every choice;
 * `capped` is `default` with small pages.
 */

export interface SimulatorProfile {
  /** Error body shape (not shown): `{success:false,error}` or `{error}`. */
  errorBody: 'success-and-error' | 'error-only';
  /** Status for an id that names nothing, on `/api/...` (not shown; the CLOB's is 404). */
  unknownIdStatus: 400 | 404;
  /** Status for an id of the wrong form, on `/api/...` (not shown; the CLOB's is 400). */
  malformedIdStatus: 400 | 422;
  /** A requested id that is not a market, in the CLOB price batch: no entry, or `market_id` and `timestamp` only. */
  batchUnknownMarket: 'omit' | 'bare';
  /** Order of `GET /api/markets/:id/activity` (not shown). */
  activityOrder: 'newest-first' | 'oldest-first';
  /** Whether the market detail form carries fields beyond those shown (the list form's `taker_fee_bps`). */
  detailExtraFields: boolean;
  /** Whether CLOB answers carry `success: true` ("most CLOB responses do not carry it"). */
  clobSuccessField: boolean;
  /** The CLOB batch's timestamps: milliseconds omitted when zero, or always. */
  batchMilliseconds: 'unless-zero' | 'never';
  /**
   * Largest page of every paged list (markets, holders, comments, activity; not shown, beyond the
   * service's caps of 50 comments and 100 activity entries): a larger `limit` gets this many, and
   * `pagination.limit` says so.
   */
  pageMax: number;
  /** Delay before every answer, in ms (not shown), before any fault's. */
  latencyMs: number;
  /** `Retry-After` of a 429: delay-seconds, or an HTTP date (both are HTTP's forms). */
  retryAfter: 'seconds' | 'http-date';
  /** The `status` text of `GET /health` (only its type is shown). */
  healthStatus: string;
  // How answers travel and are written (sim/wire-form.ts): what a CDN or another server may do.
  /** `Content-Encoding`: none; br (else gzip) when the request accepts it; gzip whatever it accepts. */
  compression: 'none' | 'as-asked' | 'gzip-unasked';
  /** Times: `Z` with milliseconds, or `+00:00` in whole seconds (ISO 8601 allows both). */
  timeForm: 'z-milliseconds' | 'offset-seconds';
  /** An unknown field added to every record (the interface never says there are no others). */
  extraFields: boolean;
  /** Every answer a 301 to the same path on `https`: an address that is not the API's (for `/health`). */
  redirect: boolean;
}

/** The choices of how answers travel and are written, as the `default` profile makes them. */
const plainWire = {
  compression: 'none',
  timeForm: 'z-milliseconds',
  extraFields: false,
  redirect: false,
} as const satisfies Partial<SimulatorProfile>;

const profiles = {
  default: {
    errorBody: 'success-and-error',
    unknownIdStatus: 404,
    malformedIdStatus: 400,
    batchUnknownMarket: 'omit',
    activityOrder: 'newest-first',
    detailExtraFields: true,
    clobSuccessField: false,
    batchMilliseconds: 'unless-zero',
    pageMax: 100,
    latencyMs: 0,
    retryAfter: 'seconds',
    healthStatus: 'ok',
    ...plainWire,
  },
  terse: {
    errorBody: 'error-only',
    unknownIdStatus: 400,
    malformedIdStatus: 422,
    batchUnknownMarket: 'bare',
    activityOrder: 'oldest-first',
    detailExtraFields: false,
    clobSuccessField: true,
    batchMilliseconds: 'never',
    pageMax: 25,
    latencyMs: 5,
    retryAfter: 'http-date',
    healthStatus: 'healthy',
    ...plainWire,
    compression: 'as-asked',
  },
} as const satisfies Record<string, SimulatorProfile>;

export const simulatorProfiles = {
  ...profiles,
  /** `default`, serving at most 20 entries a page on every paged list (as a service may). */
  capped: { ...profiles.default, pageMax: 20 },
  /** `default`'s answers the way a CDN may deliver them: gzip unasked, `+00:00` times, added fields. */
  verbose: {
    ...profiles.default,
    compression: 'gzip-unasked',
    timeForm: 'offset-seconds',
    extraFields: true,
  },
  /** Not the API's address: everything redirects (the relay's `/health` must say misconfigured). */
  redirect: { ...profiles.default, redirect: true },
} as const satisfies Record<string, SimulatorProfile>;

export type SimulatorProfileName = keyof typeof simulatorProfiles;

/** Every profile, as `--profile` takes them. */
export const allSimulatorProfileNames = Object.keys(simulatorProfiles) as SimulatorProfileName[];

/**
 * The profiles that serve the interface (all but `redirect`): the matrix every channel's end-to-end
 * tests run against.
 */
export const simulatorProfileNames = allSimulatorProfileNames.filter(
  (name) => !simulatorProfiles[name].redirect,
);

/** An error answer's body in the profile's shape. */
export function errorBodyOf(profile: SimulatorProfile, message: string): Record<string, unknown> {
  return profile.errorBody === 'success-and-error' ? { success: false, error: message } : { error: message };
}

/** A 429's `Retry-After` for a wait of one second, in the profile's form. */
export function retryAfterValue(profile: SimulatorProfile, nowMs: number): string {
  // An HTTP date has whole seconds: two seconds on, so that at least one remains when it arrives.
  return profile.retryAfter === 'seconds'
    ? '1'
    : new Date((Math.floor(nowMs / 1000) + 2) * 1000).toUTCString();
}

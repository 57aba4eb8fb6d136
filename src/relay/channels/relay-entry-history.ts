/**
 * @module relay/channels/relay-entry-history
 * The history of a channel whose stream delivers each entry once, by its id (docs/protocol.md
 * "History since a time"): the snapshot of a subscription with `since` is the read's entries, the
 * join's and the held messages', each id once, oldest first. The read starts only once the stream
 * has a state and after the join, so its newest page reaches past the join point and the held
 * messages cover everything after it: no gap. The read may also reach past the stream's last held
 * message (entries the stream's next poll brings): those are left to the live updates, so no
 * duplicate.
 */
import type { SinceSpec } from '../../../packages/protocol/src/channels/history.ts';
import type { ServesHistory } from './relay-definition.ts';

/** What such a channel declares: how its history is read, and its data's entries. */
export interface EntryHistory<Upstream, Data, Entry> {
  /** The entries since `since`, oldest first, each id once, held as the channel's data holds them. */
  read: ServesHistory<Upstream, Data, Data>['read'];
  /** The entries a message's data holds, oldest first. */
  entriesOf(data: Data): readonly Entry[];
  /** The data holding `entries`. */
  dataOf(entries: Entry[]): Data;
  /** An entry's id, which `since` may name. */
  idOf(entry: Entry): string;
  /** An entry's time, in ms since the epoch. */
  timeOf(entry: Entry): number;
  readonly idName: string;
}

/** The channel's history, its snapshot merging by id. */
export function entryHistory<Upstream, Data, Entry>(
  entries: EntryHistory<Upstream, Data, Entry>,
): ServesHistory<Upstream, Data, Data> {
  const { idOf, entriesOf, dataOf, timeOf } = entries;
  /** The entries of the state at the join that `since` asks for. */
  const sinceJoin = (joined: readonly Entry[], since: SinceSpec): readonly Entry[] => {
    if (since.kind === 'time') return joined.filter((entry) => timeOf(entry) >= since.at);
    const named = joined.findIndex((entry) => idOf(entry) === since.id);
    return named < 0 ? [] : joined.slice(named + 1);
  };
  return {
    read: entries.read,
    idName: entries.idName,
    snapshotOf(read, since, join, held) {
      const history = entriesOf(read);
      const heldEntries = held.flatMap((message) => entriesOf(message.data));
      const merged: Entry[] = [];
      const ids = new Set<string>();
      const add = (entry: Entry) => {
        const id = idOf(entry);
        if (ids.has(id)) return;
        ids.add(id);
        merged.push(entry);
      };
      const joinEntries = entriesOf(join);
      // The history reaches past what the stream has delivered (it was read after the join): its
      // entries after the last one the stream delivered come as live updates, so they stay out here.
      const delivered = new Set([...joinEntries, ...heldEntries].map(idOf));
      const frontier = history.findLastIndex((entry) => delivered.has(idOf(entry)));
      for (const entry of history.slice(0, frontier + 1)) add(entry);
      for (const entry of sinceJoin(joinEntries, since)) add(entry);
      for (const entry of heldEntries) add(entry);
      return dataOf(merged);
    },
  };
}

// The `voided_deal` check (docs/fairness.md §13.1, audit.md §4.2): the seed DealVoided publishes
// opens the deal's commitment, and, once the cards were dealt, gives the recorded deal record.
import type { Json } from "./canonical";
import { type Bytes, hex, unhex } from "./bytes";
import * as F from "./fairness";

type Obj = { [key: string]: Json };

/** Undefined when the voided deal was the deal committed to (and dealt), else what differs. */
export async function voidedDealCheck(tableId: string, seatCount: number, events: readonly { type: string; data: Obj }[]): Promise<string | undefined> {
  const of = (type: string) => events.find((e) => e.type === type)?.data;
  const started = of("DealStarted")!;
  const voided = of("DealVoided")!;
  const id: F.DealId = { tableId, dealNumber: started.deal_number as number };
  const seed = unhex(String(voided.seed));
  if (hex(await F.seedCommitment(id, seed)) !== started.seed_commitment)
    return "the seed published with the voiding does not open the deal's seed commitment";
  const dealt = of("CardsDealt");
  if (dealt === undefined) return undefined; // voided before the cards were dealt: nothing more to compare
  const contributions: (Bytes | null)[] = Array.from({ length: seatCount }, () => null);
  for (const e of events) if (e.type === "EntropyContributed") contributions[e.data.seat as number] = unhex(String(e.data.entropy));
  const deck = await F.shuffle(await F.shuffleKey(id, seed, contributions));
  const key = await F.recordKey(id, seed);
  if (hex(await F.deckDigest(key, deck)) !== dealt.deck_digest) return "the deck the seed gives is not the deck recorded in CardsDealt";
  const cutDeck = F.cut(deck, of("DeckCut")?.position as number);
  if (hex(await F.cutDigest(key, cutDeck)) !== dealt.cut_deck_digest) return "the cut deck is not the one recorded in CardsDealt";
  const hands = F.deal(cutDeck, started.dealer as number, seatCount);
  const digests = await Promise.all(hands.map((h, s) => F.handDigest(key, s, h)));
  if (digests.map(hex).join(" ") !== (dealt.hand_digests as string[]).join(" ")) return "the hands are not the ones recorded in CardsDealt";
  return undefined;
}

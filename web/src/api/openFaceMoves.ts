// A seat's open-face moves, made as the Python SDK makes them (sapsam_client.open_face and
// discards): each street's placement signed (docs/fairness.md §19, `place`); at Pineapple the
// street's discard committed (§23, scheme 3, a fresh 16-byte nonce) and opened at the end with
// RevealDiscards (`discards-reveal`); a Fantasyland hand committed as a scheme-2 arrangement
// (`fantasyland-commit`) and opened with RevealFantasyland (`fantasyland-reveal`). Discards and
// Fantasyland settings are kept in localStorage before their commitment is sent, so a reloaded
// page still opens them.
import { type Bytes, hex, unhex } from "../bytes";
import { cardName, parseCard } from "../cards";
import {
  type Rows,
  arrangementCommitment,
  discardsRevealMessage,
  fantasylandCommitMessage,
  fantasylandRevealMessage,
  placeMessage,
} from "../fairness";
import { discardCommitment } from "../openface";
import { COMMITMENT_SCHEME, type NamedRows, SignedSeat, freshNonce, keptStore, parseRows, rowNames } from "./seat";
import { requestId } from "./transport";

interface KeptDiscard {
  street: number;
  cards: string[];
  nonce: string;
  commitment: string;
}

interface KeptSetting {
  rows: NamedRows;
  nonce: string;
  commitment: string;
}

const discards = keptStore<KeptDiscard[]>("sapsam.discards");
const settings = keptStore<KeptSetting>("sapsam.fantasyland");

export const loadDiscards = (seat: string, deal: number): KeptDiscard[] => (discards.load(seat, deal) ?? []).sort((a, b) => a.street - b.street);
export const loadSetting = settings.load;

export class OpenFaceMoves extends SignedSeat {
  /** Place street `street`'s cards (and at Pineapple commit the `discard`, kept here first). */
  async place(deal: number, street: number, placement: Rows, discard: readonly number[] = []): Promise<void> {
    let commitment: Bytes = new Uint8Array(0);
    if (discard.length) {
      const nonce = freshNonce(16);
      commitment = await discardCommitment(this.dealId(deal), this.position, this.player, street, discard, nonce);
      const kept = loadDiscards(this.seat, deal).filter((d) => d.street !== street);
      kept.push({ street, cards: discard.map(cardName), nonce: hex(nonce), commitment: hex(commitment) });
      discards.save(this.seat, deal, kept);
    }
    await this.api.tables.placeCards({
      requestId: requestId(),
      seat: this.seat,
      street,
      placement: rowNames(placement),
      dealNumber: BigInt(deal),
      signature: await this.signature(placeMessage(this.dealId(deal), this.position, this.player, street, placement, commitment)),
      discardCommitment: commitment,
    });
  }

  /** Open the deal's discards (false: none kept in this browser; the server opens them at its deadline). */
  async revealDiscards(deal: number): Promise<boolean> {
    const kept = loadDiscards(this.seat, deal);
    if (!kept.length) return false;
    const openings = kept.map((d) => ({ street: d.street, cards: d.cards.map(parseCard), nonce: unhex(d.nonce) }));
    await this.api.tables.revealDiscards({
      requestId: requestId(),
      seat: this.seat,
      discards: kept.map((d) => ({ cards: d.cards, nonce: unhex(d.nonce) })),
      dealNumber: BigInt(deal),
      signature: await this.signature(discardsRevealMessage(this.dealId(deal), this.position, this.player, openings)),
    });
    discards.forget(this.seat, deal);
    return true;
  }

  /** Set a Fantasyland hand face down: `rows` (13 cards) committed, scheme 2 (a setting kept before is sent unchanged). */
  async commitFantasyland(deal: number, rows: Rows): Promise<void> {
    let kept = loadSetting(this.seat, deal);
    if (!kept) {
      const nonce = freshNonce();
      const commitment = await arrangementCommitment(this.dealId(deal), this.position, rows, nonce, COMMITMENT_SCHEME, this.player);
      kept = { rows: rowNames(rows), nonce: hex(nonce), commitment: hex(commitment) };
      settings.save(this.seat, deal, kept);
    }
    const commitment = unhex(kept.commitment);
    await this.api.tables.commitFantasyland({
      requestId: requestId(),
      seat: this.seat,
      commitment,
      dealNumber: BigInt(deal),
      signature: await this.signature(fantasylandCommitMessage(this.dealId(deal), this.position, this.player, COMMITMENT_SCHEME, commitment)),
    });
  }

  /** Open the Fantasyland hand (false: no setting kept here). */
  async revealFantasyland(deal: number): Promise<boolean> {
    const kept = loadSetting(this.seat, deal);
    if (!kept) return false;
    const nonce = unhex(kept.nonce);
    await this.api.tables.revealFantasyland({
      requestId: requestId(),
      seat: this.seat,
      arrangement: kept.rows,
      nonce,
      dealNumber: BigInt(deal),
      signature: await this.signature(fantasylandRevealMessage(this.dealId(deal), this.position, this.player, parseRows(kept.rows), nonce)),
    });
    settings.forget(this.seat, deal);
    return true;
  }
}

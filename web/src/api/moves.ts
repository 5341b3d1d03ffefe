// A seat's moves, made for the player as the Python SDK's Seat makes them (sapsam_client.seat):
// the arrangement committed as a scheme-2 hash with a fresh 32-byte nonce (docs/fairness.md §12.1),
// committed and confirmed in one call, then revealed; a natural declaration (§21) before it at a
// table with naturals; each move signed with the player's key (§19). The rows and nonces are kept in
// localStorage before they are sent, so a reloaded page still reveals what it committed.
import { hex, unhex } from "../bytes";
import {
  type Rows,
  announceMessage,
  arrangementCommitment,
  commitMessage,
  declarationCommitment,
  declareMessage,
  revealMessage,
} from "../fairness";
import { SurrenderChoice } from "../gen/sapsam/v1/table_pb";
import { COMMITMENT_SCHEME, type NamedRows, SignedSeat, freshNonce, keptStore, parseRows, rowNames } from "./seat";
import { requestId } from "./transport";

export { seatParts } from "./seat";


/** What one seat committed in one deal (kept until revealed). */
export interface Kept {
  rows: NamedRows;
  nonce: string;
  commitment: string;
  natural: string;
  naturalNonce: string;
}

const keptRows = keptStore<Kept>("sapsam.kept");
export const loadKept = keptRows.load;
export const forgetKept = keptRows.forget;

/** One seat held by the identity's player: its moves. */
export class SeatMoves extends SignedSeat {
  /** Declare (at a table with naturals) then commit and confirm `rows` for deal `deal`. */
  async commit(deal: number, rows: Rows, naturals: boolean, natural = "none"): Promise<void> {
    const id = this.player;
    const nonce = freshNonce();
    const commitment = await arrangementCommitment(this.dealId(deal), this.position, rows, nonce, COMMITMENT_SCHEME, id);
    const previous = loadKept(this.seat, deal);
    let declared = previous !== null && previous.natural !== "";
    const kept: Kept = {
      rows: rowNames(rows),
      nonce: hex(nonce),
      commitment: hex(commitment),
      natural: declared ? previous!.natural : naturals ? natural : "",
      naturalNonce: declared ? previous!.naturalNonce : naturals ? hex(freshNonce()) : "",
    };
    keptRows.save(this.seat, deal, kept);
    if (naturals && !declared) {
      const digest = await declarationCommitment(this.dealId(deal), this.position, id, kept.natural, unhex(kept.naturalNonce));
      await this.api.tables.declareNatural({
        requestId: requestId(),
        seat: this.seat,
        commitment: digest,
        dealNumber: BigInt(deal),
        signature: await this.signature(declareMessage(this.dealId(deal), this.position, id, digest)),
      });
      declared = true;
    }
    await this.api.tables.commitArrangement({
      requestId: requestId(),
      seat: this.seat,
      commitment,
      dealNumber: BigInt(deal),
      commitmentScheme: COMMITMENT_SCHEME,
      signature: await this.signature(commitMessage(this.dealId(deal), this.position, id, COMMITMENT_SCHEME, commitment)),
      confirm: true,
    });
  }

  /** Reveal what was committed for deal `deal` (false: nothing kept here to reveal). */
  async reveal(deal: number): Promise<boolean> {
    const kept = loadKept(this.seat, deal);
    if (!kept) return false;
    const rows = parseRows(kept.rows);
    const nonce = unhex(kept.nonce);
    await this.api.tables.revealArrangement({
      requestId: requestId(),
      seat: this.seat,
      arrangement: kept.rows,
      nonce,
      dealNumber: BigInt(deal),
      signature: await this.signature(revealMessage(this.dealId(deal), this.position, this.player, rows, nonce)),
      natural: kept.natural,
      naturalNonce: kept.naturalNonce ? unhex(kept.naturalNonce) : new Uint8Array(),
    });
    forgetKept(this.seat, deal);
    return true;
  }

  /** Announce play (or surrender) on the seat's turn. */
  async announce(deal: number, surrender: boolean): Promise<void> {
    await this.api.tables.announceSurrender({
      requestId: requestId(),
      seat: this.seat,
      choice: surrender ? SurrenderChoice.SURRENDER : SurrenderChoice.PLAY,
      dealNumber: BigInt(deal),
      signature: await this.signature(announceMessage(this.dealId(deal), this.position, this.player, surrender)),
    });
  }

  contributeEntropy(): Promise<unknown> {
    return this.api.tables.contributeEntropy({ requestId: requestId(), seat: this.seat, entropy: freshNonce() });
  }
}

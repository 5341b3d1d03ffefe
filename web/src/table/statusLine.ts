// The table page's status line. Some of its words speak of one deal's arranging ("Committed and
// confirmed", a suggestion, an announcement): the next deal's board clears them, as they no longer
// hold, and words about a deal that arrive once a later deal's board is up (a commit answered
// after the next hand came) are not shown at all.

export class StatusLine {
  /** The deal the words shown speak of, 0 for none. */
  private about = 0;

  /**
   * @param show puts the words on the page
   * @param boardDeal the deal whose board is up, 0 for none
   */
  constructor(
    private readonly show: (text: string) => void,
    private readonly boardDeal: () => number,
  ) {}

  /** Words about no deal in particular. */
  say(text: string): void {
    this.show(text);
    this.about = 0;
  }

  /** Words about one deal: not shown once a later deal's board is up. */
  sayOfDeal(deal: number, text: string): void {
    if (this.boardDeal() > deal) return;
    this.show(text);
    this.about = deal;
  }

  /** A board for `deal` goes up: words about another deal are cleared. */
  boardFor(deal: number): void {
    if (this.about && this.about !== deal) this.say("");
  }
}

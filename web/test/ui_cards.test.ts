import { describe, expect, it } from "vitest";
import { cardLabel, cardShort, isRed } from "../src/ui/cards";

describe("ui/cards", () => {
  it("names cards for screen readers", () => {
    expect(cardLabel("As")).toBe("ace of spades");
    expect(cardLabel(0)).toBe("two of clubs");
    expect(cardLabel("Td")).toBe("ten of diamonds");
  });
  it("writes them short with suit symbols", () => {
    expect(cardShort("Th")).toBe("10♥");
    expect(cardShort("Kc")).toBe("K♣");
  });
  it("prints hearts and diamonds red", () => {
    expect(["2c", "2d", "2h", "2s"].map(isRed)).toEqual([false, true, true, false]);
  });
});

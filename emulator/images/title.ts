/**
 * The images room's titles: what save_image names an image, cut to the API's limit in whole graphemes.
 */
import { TITLE_MAX } from "../instances/codes";

/**
 * The title save_image gives an image: the instance's name, then `-` and the save's time. Titles are
 * limited to TITLE_MAX characters (code points, as the API counts them), so the name is cut to leave
 * room for the time, and cut between graphemes: an emoji, a flag or an accented letter is kept whole or
 * dropped whole, never split into a broken character.
 */
export function savedImageTitle(name: string, savedAt: number): string {
  const suffix = `-${savedAt}`;
  return `${cutToCharacters(name, TITLE_MAX - Array.from(suffix).length)}${suffix}`;
}

/**
 * A title as earlier emulators saved it, uncut and possibly over the limit, as this one would have
 * made it; any other title is left for the state schema to judge.
 */
export function repairedSavedTitle(title: string): string {
  const saved = /^(.*)-(\d{1,15})$/su.exec(title);
  if (saved === null || Array.from(title).length <= TITLE_MAX) return title;
  return savedImageTitle(saved[1], Number(saved[2]));
}

const graphemes = new Intl.Segmenter(undefined, { granularity: "grapheme" });

/** The longest start of `text`, in whole graphemes, of at most `max` code points. */
export function cutToCharacters(text: string, max: number): string {
  let kept = "";
  let length = 0;
  for (const { segment } of graphemes.segment(text)) {
    const size = Array.from(segment).length;
    if (length + size > max) break;
    kept += segment;
    length += size;
  }
  return kept;
}

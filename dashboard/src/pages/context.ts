// What every page of the dashboard is given (docs/operator-guide.md "Dashboard"): the API client, the
// element to draw into and the app's navigation. A module of its own so the pages need not import the
// entry point that imports them.
import type { Api } from '../api.js';

export interface PageContext {
  api: Api;
  main: HTMLElement;
  /** Shows a message at the top of the next page drawn (or this one, when not navigating). */
  flash(text: string, kind?: 'notice' | 'error'): void;
  navigate(hash: string): void;
  /** Draws the current page again, keeping the flash message. */
  refresh(): void;
  signOut(reason?: string): Promise<void>;
}

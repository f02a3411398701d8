import { Observable, type Subscription } from 'rxjs';
import type { KubeConfig } from '@kubernetes/client-node';
import { InformerError } from '../../0-model/errors.ts';
import { limitFor, parseJson, readBody, type BodyLimit } from './body.ts';
import type { BodyProgress } from './progress.ts';
import { JSON_ACCEPT, METADATA_LIST_ACCEPT, METADATA_WATCH_ACCEPT, type RequestSettings } from './options.ts';
import { get, type Opened } from './request.ts';

/**
 * What one ListWatch asks for and remembers of a metadata-only resource: PartialObjectMetadata until the
 * server answers 406, plain JSON from then on, and the `NotAcceptable` notice of that 406 until a page or a
 * watch that succeeded carries it (once). A resource that is not metadata-only always asks for `plain` (JSON, or
 * protobuf with JSON as the fallback).
 */
export class MetadataAccept {
  private plainJson = false;
  private notice: InformerError | undefined;
  private readonly kc: KubeConfig;
  private readonly path: string;
  private readonly settings: RequestSettings;
  private readonly metadataOnly: boolean;
  private readonly limits: { readonly list: BodyLimit; readonly watch: BodyLimit };
  private readonly plain: string;

  constructor(
    kc: KubeConfig,
    path: string,
    settings: RequestSettings,
    metadataOnly: boolean,
    limits: { readonly list: BodyLimit; readonly watch: BodyLimit },
    /** What a request that is not metadata-only asks for: JSON, or protobuf with JSON as the fallback. */
    plain = JSON_ACCEPT,
  ) {
    this.plain = plain;
    this.kc = kc;
    this.path = path;
    this.settings = settings;
    this.metadataOnly = metadataOnly;
    this.limits = limits;
  }

  /** The notice of the 406, once. */
  takeNotice(): InformerError | undefined {
    const taken = this.notice;
    this.notice = undefined;
    return taken;
  }

  /**
   * GETs `pathAndQuery`; a metadata-only request answered 406 is read to its
   * end (so the connection is reused) and sent again as plain JSON, and a
   * `NotAcceptable` notice waits for the next page or watch that succeeds. The 406's body is held to the same
   * time bounds as the body after it (`idleMs` without a byte, `progress`'s floor): a server that stalls it must
   * not hang the list.
   */
  open(pathAndQuery: string, phase: 'list' | 'watch', bounds: { idleMs?: number; progress?: BodyProgress } = {}): Observable<Opened> {
    return new Observable<Opened>((subscriber) => {
      let current: Subscription | undefined;
      const attempt = () => {
        const asMetadata = this.metadataOnly && !this.plainJson;
        const accept = !asMetadata
          ? this.metadataOnly
            ? JSON_ACCEPT
            : this.plain
          : phase === 'list'
            ? METADATA_LIST_ACCEPT
            : METADATA_WATCH_ACCEPT;
        current?.unsubscribe();
        current = get(this.kc, pathAndQuery, phase, this.settings, accept).subscribe({
          next: (opened) => {
            if (!(asMetadata && opened.response.statusCode === 406)) return subscriber.next(opened);
            // Only the first 406 of this ListWatch makes a notice (two requests in flight may both get one).
            const first = !this.plainJson;
            this.plainJson = true;
            const { idleMs, progress } = bounds;
            if (idleMs !== undefined) {
              opened.response.setTimeout(idleMs, () =>
                subscriber.error(new InformerError('Timeout', `${phase} ${this.path}: no bytes for ${idleMs} ms`, { phase })),
              );
            }
            readBody(
              opened.response,
              limitFor(opened.response, this.limits[phase], this.settings),
              (body) => {
                if (first) this.notice = this.notAcceptable(phase, parseJson(body.toString('utf8')));
                attempt();
              },
              (error) => {
                if (first) this.notice = this.notAcceptable(phase, undefined);
                subscriber.error(error);
              },
              phase,
              progress,
            );
          },
          error: (error: unknown) => subscriber.error(error),
        });
      };
      attempt();
      return () => current?.unsubscribe();
    });
  }

  private notAcceptable(phase: 'list' | 'watch', statusObject: unknown): InformerError {
    return new InformerError(
      'NotAcceptable',
      `${phase} ${this.path}: the server does not serve PartialObjectMetadata (406 Not Acceptable); fetching ` +
        `full objects and cutting them down to metadata on arrival`,
      { status: 406, phase, statusObject },
    );
  }
}

/** RemoteImageService: runtime.v1.ImageService over gRPC (upstream remote_image.go semantics). */
import { CriChannel, DEFAULT_TIMEOUT_MS } from './channel.js';
import { filesystemUsageFromWire, imageFromWire, toWire } from './convert.js';
import { replyError } from './errors.js';
import { IMAGE_SERVICE } from './proto.js';
import type { CriClientOptions } from './runtime.js';
import type { AuthConfig, FilesystemUsage, Image, ImageService, PodSandboxConfig } from './types.js';

export const DEFAULT_PULL_TIMEOUT_MS = 10 * 60 * 1000;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- proto-loader's messages are untyped; Wire is where they enter
type Wire = any;

export class RemoteImageService implements ImageService {
  readonly timeoutMs: number;
  readonly pullTimeoutMs: number;
  private readonly channel: CriChannel;
  /** Set on a view made by withSignal. */
  private signal: AbortSignal | undefined;

  constructor(endpoint: string, opts: CriClientOptions = {}) {
    this.timeoutMs = opts.timeoutMs && opts.timeoutMs > 0 ? opts.timeoutMs : DEFAULT_TIMEOUT_MS;
    this.pullTimeoutMs = opts.pullTimeoutMs && opts.pullTimeoutMs > 0 ? opts.pullTimeoutMs : DEFAULT_PULL_TIMEOUT_MS;
    this.channel = new CriChannel(endpoint, IMAGE_SERVICE);
  }

  /**
   * This client bound to `signal`: its calls are cancelled when the signal fires (a pod sync's
   * calls, when a kill arrives). A view sharing this client's channel, nothing is opened.
   */
  withSignal(signal: AbortSignal): this {
    const view = Object.create(this) as this;
    view.signal = signal;
    return view;
  }

  private call<T = Wire>(method: string, request: object, timeoutMs: number = this.timeoutMs): Promise<T> {
    return this.channel.unary<T>(method, toWire(request), timeoutMs, this.signal);
  }

  /** All images, or those matching `image` (a name or id). */
  async listImages(image?: string): Promise<Image[]> {
    const r = await this.call('ListImages', image ? { filter: { image: { image } } } : {});
    return (r?.images ?? []).map(imageFromWire);
  }

  async imageStatus(image: string): Promise<Image | undefined> {
    const r = await this.call('ImageStatus', { image: { image }, verbose: false });
    if (!r?.image) return undefined;
    const img = imageFromWire(r.image);
    if (!img.id || img.size === 0n)
      throw replyError('ImageStatus', `id or size of image ${JSON.stringify(image)} is not set`);
    return img;
  }

  async pullImage(image: string, auth?: AuthConfig, sandboxConfig?: PodSandboxConfig): Promise<string> {
    const req: Record<string, unknown> = { image: { image } };
    if (auth) req.auth = auth;
    if (sandboxConfig) req.sandboxConfig = sandboxConfig;
    const r = await this.call('PullImage', req, this.pullTimeoutMs);
    if (!r?.imageRef) throw replyError('PullImage', `imageRef of image ${JSON.stringify(image)} is not set`);
    return r.imageRef as string;
  }

  async removeImage(image: string): Promise<void> {
    await this.call('RemoveImage', { image: { image } });
  }

  async imageFsInfo(): Promise<FilesystemUsage[]> {
    const r = await this.call('ImageFsInfo', {});
    return (r?.imageFilesystems ?? []).map(filesystemUsageFromWire);
  }

  close(): void {
    this.channel.close();
  }
}

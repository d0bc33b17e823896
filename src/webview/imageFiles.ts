import * as l10n from '@vscode/l10n';
import type { ImageAttachment } from '../common/conversation';
import { sniffImageType } from '../common/imageRules';
import { showNotice } from './notice';

const MAX_IMAGE_BYTES = 20 * 1024 * 1024;
const IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/webp'];

/**
 * Reads image files attached to a question (picked, pasted or dropped), each handed to `add` as it
 * is read. A file refused (its type, its size, or what its bytes say it is) is named in a notice.
 */
export async function readImageFiles(files: FileList | File[], add: (image: ImageAttachment) => void): Promise<void> {
  for (const f of Array.from(files)) {
    if (f.type === 'image/gif') {
      showNotice(l10n.t('{0}: GIF images are not supported; use PNG, JPEG or WEBP.', f.name));
      continue;
    }
    if (!IMAGE_TYPES.includes(f.type)) {
      showNotice(l10n.t('{0}: only PNG, JPEG and WEBP images can be attached.', f.name));
      continue;
    }
    if (f.size > MAX_IMAGE_BYTES) {
      showNotice(l10n.t('{0} is {1} MB; images are limited to 20 MB.', f.name, (f.size / 1024 / 1024).toFixed(1)));
      continue;
    }
    // The bytes decide the type, not the file name or the browser's label.
    const actual = sniffImageType(new Uint8Array(await f.slice(0, 32).arrayBuffer()));
    if (!actual || !(IMAGE_TYPES as readonly string[]).includes(actual)) {
      showNotice(
        l10n.t(
          '{0} is {1} by its content; only PNG, JPEG and WEBP can be attached.',
          f.name || 'The pasted image',
          actual ? `a ${actual.slice(6).toUpperCase()} image` : 'not an image',
        ),
      );
      continue;
    }
    const data = await new Promise<string>((resolve, reject) => {
      const reader = new FileReader();
      reader.onload = () => resolve(typeof reader.result === 'string' ? reader.result.replace(/^data:[^,]*,/, '') : '');
      reader.onerror = () => reject(reader.error ?? new Error('could not read the file'));
      reader.readAsDataURL(f);
    });
    add({ name: f.name || 'pasted image', mediaType: actual as ImageAttachment['mediaType'], data, detail: 'auto' });
  }
}

import * as z from '../core/z';
import { AuthenticationError } from '../core/errors';
import type { Transport } from '../core/transport';
import { parseResponse } from '../core/validate';
import type { RequestOptions } from '../core/requestOptions';

const ModelSchema = z.looseObject({
  id: z.string(),
  object: z.string().optional(),
  created: z.number().optional(),
  owned_by: z.string().optional(),
});

// Gateways differ: `{object:"list", data:[…]}`, `{success:true, data:[…]}`, or both.
const ModelListSchema = z.looseObject({ data: z.array(ModelSchema) });

export type Model = z.output<typeof ModelSchema>;

export class Models {
  constructor(private readonly transport: Transport) {}

  /** `GET /v1/models`: the model objects this key can see. */
  async list(opts: RequestOptions = {}): Promise<Model[]> {
    const { data } = await this.transport.json({ method: 'GET', path: '/v1/models', auth: 'bearer', signal: opts.signal });
    return parseResponse(ModelListSchema, data, 'the model list').data;
  }

  /** True when the key is valid, false on 401; any other failure is thrown. */
  async verifyKey(opts: RequestOptions = {}): Promise<boolean> {
    try {
      await this.list(opts);
      return true;
    } catch (err) {
      if (err instanceof AuthenticationError) return false;
      throw err;
    }
  }
}

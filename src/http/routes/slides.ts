import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import type { Deps } from '../../app/ports/index.js';
import { createSlide } from '../../app/polls/create-slide.js';
import { deleteSlide } from '../../app/polls/delete-slide.js';
import { listSlides } from '../../app/polls/list-slides.js';
import { updateSlide } from '../../app/polls/update-slide.js';
import { callerOf } from '../auth.js';
import { Answers, AnyId, Data, DataWithSecret, Strict } from '../schemas/common.js';
import { CreateSlideBody, Slide, SlideDeleted, Slides, UpdateSlideBody } from '../schemas/slides.js';

const tags = ['slides'];

export const slideRoutes =
  (deps: Deps): FastifyPluginAsync =>
  async (root) => {
    const app = root.withTypeProvider<TypeBoxTypeProvider>();
    app.post(
      '/slide',
      {
        schema: {
          tags,
          summary: 'Add a slide to a poll',
          body: CreateSlideBody,
          response: Answers({ 201: DataWithSecret(Slide) }),
        },
      },
      async (req, reply) => {
        const { slide, signingSecret } = await createSlide(deps, callerOf(req), req.body);
        return reply.status(201).send({ data: slide, ...(signingSecret ? { signingSecret } : {}) });
      },
    );
    app.get(
      '/slides',
      {
        schema: {
          tags,
          summary: "List a poll's slides in order",
          querystring: Strict({ pollId: AnyId }),
          response: Answers({ 200: Data(Slides) }),
        },
      },
      async (req) => ({
        data: await listSlides(deps, callerOf(req), req.query.pollId),
      }),
    );
    app.post(
      '/slide/update',
      {
        schema: {
          tags,
          summary: 'Update a slide',
          body: UpdateSlideBody,
          response: Answers({ 200: DataWithSecret(Slide) }),
        },
      },
      async (req) => {
        const { slide, signingSecret } = await updateSlide(deps, callerOf(req), req.body);
        return { data: slide, ...(signingSecret ? { signingSecret } : {}) };
      },
    );
    app.delete(
      '/slide',
      {
        schema: {
          tags,
          summary: 'Delete a slide',
          querystring: Strict({ slideId: AnyId }),
          response: Answers({ 200: Data(SlideDeleted) }),
        },
      },
      async (req) => ({
        data: await deleteSlide(deps, callerOf(req), req.query.slideId),
      }),
    );
  };
